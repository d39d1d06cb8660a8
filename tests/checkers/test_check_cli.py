"""``judgeaudit check``: output files, and bad input exiting 2 with file, line and field."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from judgeaudit.commands.check import run_gsm8k, run_ifeval
from judgeaudit.errors import InputError

PROMPTS = [
    {"key": 1, "prompt": "Say hi without commas.", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},
    {"key": 2, "prompt": "Quote it.", "instruction_id_list": ["startend:quotation", "punctuation:no_comma"],
     "kwargs": [{}, {}]},
]
RESPONSES = [{"prompt": "Say hi without commas.", "response": "Hi, there"},
             {"prompt": "Quote it.", "response": "\"quoted\""}]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def cli(*args):
    return subprocess.run([sys.executable, "-m", "judgeaudit.cli", "check", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_ifeval_writes_result_and_unit_table(tmp_path):
    p, r = write(tmp_path / "p.jsonl", PROMPTS), write(tmp_path / "r.jsonl", RESPONSES)
    res = cli("ifeval", "--prompts", p, "--responses", r, "--out", tmp_path / "out")
    assert res.returncode == 0, res.stderr
    out = json.loads((tmp_path / "out" / "result.json").read_text())
    assert out["prompt_level_strict"] == {"value": 0.5, "passed": 1, "total": 2}
    assert out["instruction_level_strict"] == {"value": 2 / 3, "passed": 2, "total": 3}
    assert out["prompt_level_loose"]["passed"] == 1 and out["joined_by_position"] == []
    rows = [json.loads(x) for x in (tmp_path / "out" / "units.jsonl").read_text().splitlines()]
    assert [(x["key"], x["instruction_id"], x["strict"]) for x in rows] == [
        (1, "punctuation:no_comma", False), (2, "startend:quotation", True), (2, "punctuation:no_comma", True)]


@pytest.mark.parametrize(("case", "expect"), [
    ("missing", "nope.jsonl: cannot read file"),
    ("malformed", "p.jsonl:2: malformed JSON"),
    ("unknown_id", "p.jsonl:1: field 'instruction_id_list[0]': unknown instruction id 'punctuation:no_colon'"),
    ("wrong_type", "p.jsonl:1: field 'kwargs[0].num_words': must be an integer, got '50'"),
    ("no_response", "r.jsonl: field 'prompt': no response for prompt key 2"),
    ("response_field", "r.jsonl:1: field 'response': required field is missing"),
])
def test_ifeval_bad_input_names_file_line_field(tmp_path, case, expect):
    prompts, responses = [dict(x) for x in PROMPTS], [dict(x) for x in RESPONSES]
    p, r = tmp_path / "p.jsonl", tmp_path / "r.jsonl"
    if case == "unknown_id":
        prompts[0]["instruction_id_list"] = ["punctuation:no_colon"]
    if case == "wrong_type":
        prompts[0]["instruction_id_list"] = ["length_constraints:number_words"]
        prompts[0]["kwargs"] = [{"num_words": "50", "relation": "at least"}]
    if case == "no_response":
        responses = responses[:1]
    if case == "response_field":
        del responses[0]["response"]
    write(p, prompts)
    write(r, responses)
    if case == "malformed":
        p.write_text(json.dumps(PROMPTS[0]) + "\n{not json\n")
    if case == "missing":
        p = tmp_path / "nope.jsonl"
    with pytest.raises(InputError) as e:
        run_ifeval(p, r, tmp_path / "out")
    assert expect in str(e.value)
    assert not (tmp_path / "out").exists()


def test_ifeval_bad_input_exits_2_with_one_line(tmp_path):
    p = tmp_path / "p.jsonl"
    p.write_text(json.dumps(PROMPTS[0]) + "\n{not json\n")
    res = cli("ifeval", "--prompts", p, "--responses", write(tmp_path / "r.jsonl", RESPONSES), "--out", tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith(f"error: {p}:2: malformed JSON")


def test_gsm8k_bad_input_names_file_line_field(tmp_path):
    (tmp_path / "test.jsonl").write_text(json.dumps({"question": "q", "answer": "no key here"}) + "\n")
    with pytest.raises(InputError) as e:
        run_gsm8k(tmp_path, tmp_path / "out")
    assert "test.jsonl:1: field 'answer': reference solution has no '####' answer line" in str(e.value)
    with pytest.raises(InputError, match="test.jsonl not found"):
        run_gsm8k(tmp_path / "absent", tmp_path / "out")
