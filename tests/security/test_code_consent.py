"""Code a file names runs only when the command line consents.

A ``python:`` judge spec imports and calls the user's code. Typed on the command line it is the user's own
choice; held in a file (an experiment file, anything read from disk) it is someone else's, refused with one
line naming the file, the line and the spec, exit 2, before the module is imported or any call is made,
unless the command line says ``--allow-code``.
"""

from __future__ import annotations

import json
import sys
import uuid

import pytest

from judgeaudit.errors import InputError
from judgeaudit.probes.io import bundled_probes_path

pytestmark = pytest.mark.usefixtures("_clean_modules")

HOSTILE = '''
from pathlib import Path
Path({imported!r}).write_text("imported")

def grade(request):
    with open({called!r}, "a") as f:
        f.write(request.request_id + "\\n")
    return 5
'''


@pytest.fixture
def _clean_modules():
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("hostile_"):
            del sys.modules[name]


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """A module on sys.path whose import writes IMPORTED and whose ``grade`` appends to CALLED: its spec."""
    name = f"hostile_{uuid.uuid4().hex[:8]}"
    code = tmp_path / "code"
    code.mkdir()
    (code / f"{name}.py").write_text(HOSTILE.format(imported=str(tmp_path / "IMPORTED"),
                                                    called=str(tmp_path / "CALLED")))
    monkeypatch.syspath_prepend(str(code))
    return f"python:{name}:grade"


def _probes(tmp_path):
    lines = bundled_probes_path().read_text().splitlines()[:24]     # two base items
    f = tmp_path / "probes.jsonl"
    f.write_text("".join(p + "\n" for p in lines))
    return f


def _untouched(tmp_path, spec):
    assert not (tmp_path / "IMPORTED").exists(), "the file's module was imported"
    assert not (tmp_path / "CALLED").exists(), "the file's function was called"
    assert spec.split(":")[1] not in sys.modules


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# (the experiment file's body with SPEC where the code's spec goes, the line of the spec)
VALIDITY = "analysis: validity\nout: out\nprobes: {probes}\nbootstrap: 20\nregrade: 0\n"
WORLD = "analysis: world\nout: out\nset: halueval:{probes}\njudges: [reference:oracle]\nform: defects\n"
BODIES = {
    "plain": (VALIDITY + "judges:\n  - reference:constant\n  - {spec}\n", 8),
    "entry": (VALIDITY + "judges:\n  - reference:constant\n  - spec: {spec}\n    family: mine\n", 8),
    "vote": (VALIDITY + "judges:\n  - vote:3:{spec}\n", 7),
    "ensemble": (VALIDITY + "judges:\n  - reference:length\n  - ensemble:reference:constant,{spec}\n", 8),
    "batch": (VALIDITY + "batch: openai\nbatch_out: batch.jsonl\njudges:\n  - api:openai/gpt-4o-mini\n"
              "  - {spec}\n", 10),
    "loop-responder": ("analysis: loop\nout: out\ntask: gsm8k\ndata: {probes}\n"
                       "responder: {spec}\nregulators: [judge]\njudge: reference:constant\n", 5),
    "loop-judge": ("analysis: loop\nout: out\ntask: gsm8k\ndata: {probes}\nresponder: reference:echo\n"
                   "regulators: [judge]\njudge: {spec}\n", 7),
    "card": ("analysis: card\nout: out\njudge: {spec}\nrun_missing: true\n", 3),
    "world-matcher": (WORLD + "matcher_judge: {spec}\n", 6),
    "world-second-matcher": (WORLD + "matcher_judge: reference:oracle\nsecond_matcher_judge: {spec}\n", 7),
}


@pytest.mark.parametrize("case", sorted(BODIES))
def test_a_files_python_spec_is_refused_without_allow_code(case, tmp_path, hostile, cli_main):
    body, line = BODIES[case]
    exp = tmp_path / "exp.yaml"
    exp.write_text(body.format(probes=_probes(tmp_path), spec=hostile))
    r = cli_main("run", exp)
    assert r.returncode == 2, r.stderr
    msg = _one_line(r.stderr)
    assert f"{exp}:{line}:" in msg and hostile in msg and "--allow-code" in msg, msg
    _untouched(tmp_path, hostile)
    assert not (tmp_path / "out").exists() and not (tmp_path / "batch.jsonl").exists()


def test_refused_before_any_call_of_the_files_other_judges(tmp_path, hostile, fake_server, cli_main):
    srv = fake_server()
    exp = tmp_path / "exp.yaml"
    exp.write_text(VALIDITY.format(probes=_probes(tmp_path)) +
                   f"judges:\n  - spec: api:openai/fake\n    api_base: {srv.base_url}\n  - {hostile}\n")
    r = cli_main("run", exp)
    assert r.returncode == 2 and f"{exp}:9:" in _one_line(r.stderr), r.stderr
    assert srv.requests == []
    _untouched(tmp_path, hostile)


def test_allow_code_on_the_command_line_runs_the_files_code(tmp_path, hostile, cli_main):
    exp = tmp_path / "exp.yaml"
    exp.write_text(BODIES["plain"][0].format(probes=_probes(tmp_path), spec=hostile))
    r = cli_main("run", exp, "--allow-code")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "IMPORTED").exists()
    called = (tmp_path / "CALLED").read_text().split()
    assert len(called) == 26 and len(set(called)) == 26          # one call per request of the two base items
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["calls"][hostile]["failed_calls"] == 0


def test_allow_code_before_the_command_is_the_same_consent(tmp_path, hostile, cli_main):
    exp = tmp_path / "exp.yaml"
    exp.write_text(BODIES["plain"][0].format(probes=_probes(tmp_path), spec=hostile))
    r = cli_main("--allow-code", "run", exp)
    assert r.returncode == 0, r.stderr
    assert len((tmp_path / "CALLED").read_text().split()) == 26


def test_consent_does_not_outlive_its_command(tmp_path, hostile, cli_main):
    exp = tmp_path / "exp.yaml"
    exp.write_text(BODIES["plain"][0].format(probes=_probes(tmp_path), spec=hostile))
    assert cli_main("run", exp, "--allow-code").returncode == 0
    (tmp_path / "out").rename(tmp_path / "out-first")
    r = cli_main("run", exp)
    assert r.returncode == 2 and "--allow-code" in _one_line(r.stderr), r.stderr


def test_a_python_spec_typed_on_the_command_line_is_consent(tmp_path, hostile, cli_main):
    out = tmp_path / "out"
    r = cli_main("validity", "run", "--probes", _probes(tmp_path), "--judge", hostile, "--judge",
                 "reference:constant", "--bootstrap", "20", "--regrade", "0", "--out", out)
    assert r.returncode == 0, r.stderr
    assert len((tmp_path / "CALLED").read_text().split()) == 26
    assert json.loads((out / "result.json").read_text())["calls"][hostile]["failed_calls"] == 0


def test_a_typed_composite_is_consent_for_its_inner_spec(tmp_path, hostile, cli_main):
    r = cli_main("validity", "run", "--probes", _probes(tmp_path), "--judge", f"vote:2:{hostile}",
                 "--bootstrap", "20", "--regrade", "0", "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert len((tmp_path / "CALLED").read_text().split()) == 52


def test_code_not_typed_is_refused_on_every_route_a_file_could_take(hostile, tmp_path):
    """Under a command line, building a python judge whose code the command line did not name (a spec a file
    held, whichever reader passed it on) is refused before the import."""
    from judgeaudit import consent
    from judgeaudit.judges import make_judge

    with consent.command_line(["validity", "run", "--judge", "python:json:dumps"]):
        with pytest.raises(InputError, match="--allow-code"):
            make_judge(hostile)
        make_judge("python:json:dumps")                       # typed: the user's own choice
    _untouched(tmp_path, hostile)
    with consent.command_line(["run", "exp.yaml"], allow_code=True):
        make_judge(hostile)
    assert (tmp_path / "IMPORTED").exists()


def test_a_library_caller_is_its_own_consent(hostile, tmp_path):
    """Outside the command line (a Python program calling make_judge, a Ray worker rebuilding the judge the
    command checked) the caller's code already runs: the spec is built."""
    from judgeaudit.judges import make_judge

    make_judge(hostile)
    assert (tmp_path / "IMPORTED").exists()


@pytest.mark.parametrize("spec, targets", [
    ("python:a.b:c", ["a.b:c"]),
    ("python:a.b:C.m?version=2&family=x", ["a.b:C.m"]),
    ("vote:3:python:m:f", ["m:f"]),
    ("ensemble:api:openai/x,python:m:f,vote:2:python:n:g?version=1", ["m:f", "n:g"]),
    ("--judge=python:m:f", ["m:f"]),
    ("api:openai/gpt-4o-mini", []),
    ("reference:constant", []),
    ("structural:lexical?top_k=3", []),
])
def test_the_code_a_spec_names(spec, targets):
    from judgeaudit.consent import code_targets

    assert code_targets(spec) == targets
