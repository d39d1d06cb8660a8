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


def cli_process(*args):
    """``judgeaudit check ARGS`` as its own process (the real entry point, once per file: start-up is slow)."""
    return subprocess.run([sys.executable, "-m", "judgeaudit.cli", "check", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def cli(cli_main):
    """``judgeaudit check ARGS`` in this process (``cli_main``)."""
    return lambda *args: cli_main("check", *args)


def test_ifeval_writes_result_and_unit_table(tmp_path, cli):
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
    res = cli_process("ifeval", "--prompts", p, "--responses", write(tmp_path / "r.jsonl", RESPONSES),
                      "--out", tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith(f"error: {p}:2: malformed JSON")


def test_gsm8k_bad_input_names_file_line_field(tmp_path):
    (tmp_path / "test.jsonl").write_text(json.dumps({"question": "q", "answer": "no key here"}) + "\n")
    with pytest.raises(InputError) as e:
        run_gsm8k(tmp_path, tmp_path / "out")
    assert "test.jsonl:1: field 'answer': reference solution has no '####' answer line" in str(e.value)
    with pytest.raises(InputError, match="test.jsonl not found"):
        run_gsm8k(tmp_path / "absent", tmp_path / "out")


def test_ifeval_joins_by_text_and_lists_every_missing_key(tmp_path, cli):
    # prompt 2 was edited after its response was written: its stale response must not be scored by default
    p = write(tmp_path / "p.jsonl", PROMPTS + [{"key": 3, "prompt": "Be brief.", "instruction_id_list":
                                                ["punctuation:no_comma"], "kwargs": [{}]}])
    r = write(tmp_path / "r.jsonl", [RESPONSES[0], {"prompt": "Quote it, please.", "response": "\"q\""},
                                     {"prompt": "Be short.", "response": "ok"}])
    with pytest.raises(InputError) as e:
        run_ifeval(p, r, tmp_path / "out")
    assert "no response for prompt keys 2, 3 (by prompt text" in str(e.value) and "--join position" in str(e.value)
    assert not (tmp_path / "out").exists()
    res = run_ifeval(p, r, tmp_path / "out", join_by="position")
    assert [(j["key"], j["line"]) for j in res["joined_by_position"]] == [(2, 2), (3, 3)]
    assert res["join"] == "position" and res["n_prompts"] == 3
    cl = cli("ifeval", "--prompts", p, "--responses", r, "--out", tmp_path / "o2", "--join", "position")
    assert cl.returncode == 0 and "prompt key 2 joined by line position" in cl.stderr
    cl = cli("ifeval", "--prompts", p, "--responses", r, "--out", tmp_path / "o3")
    assert cl.returncode == 2 and cl.stderr.strip().splitlines()[-1].startswith(
        f"error: {r}: field 'prompt': no response for prompt keys 2, 3")


def test_ifeval_refuses_two_responses_to_one_prompt(tmp_path, cli):
    p = write(tmp_path / "p.jsonl", PROMPTS)
    r = write(tmp_path / "r.jsonl", RESPONSES + [{"prompt": "Say hi without commas.", "response": "Hi there"}])
    res = cli("ifeval", "--prompts", p, "--responses", r, "--out", tmp_path / "out")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1] == (
        f"error: {r}:3: field 'prompt': a second response to the prompt of line 1 (one response per prompt)")
    assert not (tmp_path / "out").exists()


def test_out_that_is_an_existing_file_is_one_line_exit_2(tmp_path, cli):
    p, r = write(tmp_path / "p.jsonl", PROMPTS), write(tmp_path / "r.jsonl", RESPONSES)
    f = tmp_path / "taken"
    f.write_text("x")
    res = cli("ifeval", "--prompts", p, "--responses", r, "--out", f)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith(f"error: {f}: field '--out': is an existing file")
    assert f.read_text() == "x"


@pytest.mark.data
def test_google_gpt4_responses_prompt_2785_is_missing_by_text(data_dir, tmp_path):
    d = data_dir / "ifeval"
    p, r = d / "input_data.jsonl", d / "input_response_data_gpt4_20231107_145030.jsonl"
    with pytest.raises(InputError, match=r"no response for prompt key 2785 \(by prompt text"):
        run_ifeval(p, r, tmp_path / "a")
    res = run_ifeval(p, r, tmp_path / "b", join_by="position")
    assert [j["key"] for j in res["joined_by_position"]] == [2785]
    assert (res["prompt_level_strict"]["passed"], res["prompt_level_strict"]["total"]) == (417, 541)
    assert (res["instruction_level_strict"]["passed"], res["instruction_level_strict"]["total"]) == (698, 834)
    assert (res["prompt_level_loose"]["passed"], res["instruction_level_loose"]["passed"]) == (431, 714)
