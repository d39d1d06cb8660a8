"""``judgeaudit requests export`` and the round trip: export an analysis's requests, answer them with a
scripted judge outside judgeaudit, bring the answers back through ``replay:`` and get the profile the same
judge gives when run directly — on validity (S, R), CAP (every condition) and world (arm rates, paired
gains)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner
from world_fixtures import tiny_items

import judgeaudit
import pyjudge_callables as cb
from judgeaudit.cli import app
from judgeaudit.commands.cap import run_cap
from judgeaudit.commands.requests import cap_requests, validity_requests, world_requests
from judgeaudit.commands.validity import run_validity
from judgeaudit.commands.world import run_world_cmd
from judgeaudit.errors import InputError
from judgeaudit.interop.export import read_requests
from judgeaudit.judges import make_judge

DATA = Path(judgeaudit.__file__).parent / "data"
JUDGEBENCH = f"judgebench:{DATA / 'judgebench_fixture'}"


def _export(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "export"
    res = CliRunner().invoke(app, ["requests", "export", *args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


def _write_replay(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f"replay:{path}"


def _without_ids(d: dict | list, *ids: str) -> str:
    """``d`` as text with the judges' ids named JUDGE, without the identity a run recorded (a replay records
    the route it was read through; the numbers are what must not change)."""
    if isinstance(d, dict):
        d = {k: v for k, v in d.items() if k != "identity"}
    text = json.dumps(d, sort_keys=True, default=str)
    for i in ids:
        text = text.replace(json.dumps(i)[1:-1], "JUDGE")
    return text


@pytest.fixture
def tiny_world(monkeypatch):
    """The tiny world items served for the set spec 'tiny:x' (a stand-in adapter module)."""
    mod = types.ModuleType("judgeaudit.datasets.world")
    mod.load_world = lambda spec: types.SimpleNamespace(
        items=tuple(tiny_items()), provenance={"spec": spec, "files": [], "excluded": {}})
    monkeypatch.setitem(sys.modules, "judgeaudit.datasets.world", mod)


def test_export_writes_the_exact_requests_the_run_sends(tmp_path):
    out = _export(tmp_path, "--analysis", "validity", "--regrade", "6", "--judge", "python:pyjudge_callables:grade")
    rows = [json.loads(x) for x in (out / "requests.jsonl").read_text().splitlines()]
    sent = validity_requests("bundled", regrade=6)
    judge = make_judge("python:pyjudge_callables:grade")
    assert [(r["request_id"], r["epoch"]) for r in rows] == [(q.request_id, q.epoch) for q in sent]
    assert [r["call_key"] for r in rows] == [judge.key(q) for q in sent]
    assert [r["rendered"] for r in rows] == [judge.render(q) for q in sent]
    assert sum(r["epoch"] == 1 for r in rows) == 6
    assert read_requests(out / "requests.jsonl") == sent          # every field and meta, read back as sent
    # without a judge: the prompt judgeaudit's templates send, and no call key
    plain = _export(tmp_path / "plain", "--analysis", "validity", "--regrade", "0")
    first = json.loads((plain / "requests.jsonl").read_text().splitlines()[0])
    assert first["rendered"].endswith("Score:") and first["call_key"] is None
    # promptfoo: one test per row, the rendered prompt in vars; the config sends it as it is
    tests = yaml.load((plain / "promptfoo_tests.yaml").read_text(), Loader=yaml.CSafeLoader)
    plain_rows = [json.loads(x) for x in (plain / "requests.jsonl").read_text().splitlines()]
    assert len(tests) == len(sent) - 6 and tests[0]["vars"]["judge_prompt"] == first["rendered"]
    assert [t["vars"]["judge_prompt"] for t in tests] == [r["rendered"] for r in plain_rows]   # exact, as blocks
    assert tests[0]["vars"]["request_id"] == first["request_id"] and tests[0]["metadata"]["epoch"] == 0
    config = yaml.safe_load((plain / "promptfooconfig.yaml").read_text())
    assert config["prompts"] == ["{{judge_messages}}"] and config["tests"] == "file://promptfoo_tests.yaml"
    assert json.loads(tests[0]["vars"]["judge_messages"]) == [{"role": "user", "content": first["rendered"]}]
    compile((plain / "inspect_task.py").read_text(), "inspect_task.py", "exec")


def test_world_export_hides_the_gold(tmp_path, tiny_world):
    out = _export(tmp_path, "--analysis", "world", "--set", "tiny:x", "--votes", "2", "--arm", "blind",
                  "--arm", "informed")
    rows = [json.loads(x) for x in (out / "requests.jsonl").read_text().splitlines()]
    assert len(rows) == 8 * 2 * 2 and all("gold" not in r["meta"] for r in rows)
    assert {r["meta"]["arm"] for r in rows} == {"blind", "informed"}
    assert "EPOCHS = 2" in (out / "inspect_task.py").read_text()


@pytest.mark.parametrize("answer", ["score", "raw"])
def test_validity_round_trip(tmp_path, answer):
    spec = "python:pyjudge_callables:grade?version=1"
    direct = run_validity("bundled", [spec], out=tmp_path / "direct", n_boot=200, n_regrade=8)
    out = _export(tmp_path, "--analysis", "validity", "--regrade", "8")
    judge = make_judge(spec)
    rows = []
    for r in read_requests(out / "requests.jsonl"):           # the user's harness answers each exported request
        grade = cb.grade(r)
        rows.append({"request_id": r.request_id, "epoch": r.epoch,
                     **({"score": grade} if answer == "score" else {"raw": f"Reasoning first.\nScore: {grade}"})})
    replay = _write_replay(tmp_path / "answers.jsonl", rows)
    back = run_validity("bundled", [replay], out=tmp_path / "back", n_boot=200, n_regrade=8)
    a, b = direct.result.to_dict()["judges"][spec], back.result.to_dict()["judges"][replay]
    assert a["S"] is not None and a["usable_points"] > 0
    assert _without_ids(a, spec) == _without_ids(b, replay)
    assert len(back.verdicts) == len(direct.verdicts) and back.verdicts["parse_ok"].all()
    assert judge.spec.template_version == "1"


def test_cap_round_trip(tmp_path):
    spec = "python:pyjudge_callables:grade?version=1"
    direct = run_cap([JUDGEBENCH], judge_specs=[spec], n_boot=100, seed=0, out=tmp_path / "direct")
    out = _export(tmp_path, "--analysis", "cap", "--set", JUDGEBENCH)
    reqs = read_requests(out / "requests.jsonl")
    assert reqs == cap_requests([JUDGEBENCH]) and len(reqs) % 2 == 0
    replay = _write_replay(tmp_path / "answers.jsonl",
                           [{"request_id": r.request_id, "choice": cb.grade(r)} for r in reqs])
    back = run_cap([JUDGEBENCH], judge_specs=[replay], n_boot=100, seed=0, out=tmp_path / "back")
    a = direct.to_dict()["sets"]["judgebench"]["judges"][spec]
    b = back.to_dict()["sets"]["judgebench"]["judges"][replay]
    assert a["conditions"]["C7"]["n"] > 0
    assert _without_ids(a, spec) == _without_ids(b, replay)


def test_world_round_trip(tmp_path, tiny_world):
    spec = "python:pyjudge_callables:world?version=1"
    arms = ["blind", "informed"]
    direct = run_world_cmd("tiny:x", [spec], arms, out=tmp_path / "direct", votes=2, n_boot=200, progress=False)
    out = _export(tmp_path, "--analysis", "world", "--set", "tiny:x", "--votes", "2")
    reqs = read_requests(out / "requests.jsonl")
    assert [(r.request_id, r.epoch) for r in reqs] == \
        [(r.request_id, r.epoch) for r in world_requests(None, arms, votes=2, items=tiny_items())]
    replay = _write_replay(tmp_path / "answers.jsonl",
                           [{"request_id": r.request_id, "epoch": r.epoch, "label": cb.world(r)} for r in reqs])
    back = run_world_cmd("tiny:x", [replay], arms, out=tmp_path / "back", votes=2, n_boot=200, progress=False)
    a, b = direct.result["judges"][spec], back.result["judges"][replay]
    assert a["arms"]["informed"]["recall"] > a["arms"]["blind"]["recall"]   # the scripted judge needs the world
    assert _without_ids(a, spec) == _without_ids(b, replay)
    pa = [p for p in direct.result["paired"] if p.get("judge") == spec]
    pb = [p for p in back.result["paired"] if p.get("judge") == replay]
    assert pa and _without_ids(pa, spec) == _without_ids(pb, replay)


def test_bad_export_input_is_one_line(tmp_path):
    with pytest.raises(InputError, match="give at least one --set SPEC"):
        cap_requests([])
    res = CliRunner().invoke(app, ["requests", "export", "--analysis", "loop", "--out", str(tmp_path / "o")])
    assert res.exit_code != 0 and "unknown analysis 'loop'" in str(res.exception or res.output)
    bad = tmp_path / "requests.jsonl"
    bad.write_text('{"request_id": "a", "form": "graded"}\n{"form": "graded"}\n')
    with pytest.raises(InputError) as err:
        read_requests(bad)
    assert str(err.value) == f"{bad}:2: field 'request_id': required field is missing"


def test_the_promptfoo_yaml_is_what_pyyaml_s_own_emitter_writes():
    """``block_yaml`` hands the text to libyaml's emitter only where it writes PyYAML's bytes: strings with the
    characters, keys, kept final line breaks and line lengths where the two part go through PyYAML's own."""
    import random

    from judgeaudit.commands.requests import _block_dumper, block_yaml
    from judgeaudit.interop.export import promptfoo_tests

    def pyyaml(data):
        return yaml.dump(data, Dumper=_block_dumper(yaml.SafeDumper), allow_unicode=True, sort_keys=False,
                         width=100_000)

    parted = ["a \U0001F600 b", "x\u2028y", "x\x85y\n", "kept\n\n", "\n", "w " * 60_000, "\t" + "x " * 20_000,
              "line\nbreak\u2029"]
    for text in parted:   # each alone makes libyaml's text differ from PyYAML's
        data = [{"k": text, "form": "graded"}]
        assert block_yaml(data) == pyyaml(data)
    assert block_yaml({"\r- ": 1, "": 2, "k" * 130: 3}) == pyyaml({"\r- ": 1, "": 2, "k" * 130: 3})
    rng = random.Random(0)
    alphabet = list("ab XZ 09 \n\n  \t\r:#-?[]{}|>'\"!&*%@`,.\\") + ["é", "日本", "\ufeff", "\x00", "\x1b", "\x7f",
                                                                     "\xa0", "\ufffe", "null", "---", "...",
                                                                     "{{ x }}", " \n", "\n "]
    for _ in range(300):
        def text():
            return "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 3, 10, 80, 400])))
        rows = [{"request_id": text(), "epoch": rng.randint(0, 2), "form": "graded", "rendered": text(),
                 "messages": [{"role": "system", "content": text()}, {"role": "user", "content": text()}]}]
        data = promptfoo_tests(rows)
        assert block_yaml(data) == pyyaml(data)
