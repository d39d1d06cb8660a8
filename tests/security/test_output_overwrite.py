"""No output option writes over what its command did not write.

Every option of every command that names a path the command writes is found by walking the command tree
(``commands.outputs.output_kind``: the options declared with ``out_option``), and each is pointed at

* another run's folder (a validity run, with its manifest),
* a call store (SQLite, with a paid answer in it),
* an input of the same run,
* an existing file the command did not write (a user's notes),

and must refuse with one error naming the path and the option, before anything is read or called, with every
byte under the test's folder unchanged. A call store option (``STORE``) is meant to be an existing store: it
is checked against the three others. An option that looks like an output (``--out``, ``--summary``, …) and is
not declared fails ``test_every_option_that_looks_like_an_output_is_declared``; a declared option with no
command line in ``ARGV`` fails ``test_every_declared_output_has_a_command_line_here``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from testkit import length_pairs_file
from typer.testing import CliRunner

import judgeaudit
from judgeaudit.cli import app
from judgeaudit.commands.outputs import output_kind
from judgeaudit.errors import InputError
from judgeaudit.probes.io import bundled_probes_path
from judgeaudit.records import Verdict
from judgeaudit.runfolder import MANIFEST
from judgeaudit.runinfo import file_sha256, write_result
from judgeaudit.commands.outputs import INPUT_METAVAR
from judgeaudit.runtime.store import CallStore

DATA = Path(judgeaudit.__file__).parent / "data"
GATE_BAD_INPUT = 3   # gate's bad-input exit (2 is BLIND)

LOOKS_LIKE_OUTPUT = re.compile(r"^--(out($|-.*)|.*-out$|summary$|save.*|write.*|link$|html$|junit$|report$|"
                               r"export.*|dump.*)")


# ----------------------------------------------------------------------------------------- the command tree


def _walk(cmd, path: tuple[str, ...], ctx) -> list[tuple[tuple[str, ...], object]]:
    from typer._click.core import Context

    if hasattr(cmd, "list_commands"):
        c = Context(cmd, info_name=path[-1] if path else "judgeaudit", parent=ctx)
        found = [(path, cmd)] if path else []   # a group runs too (card, calibrate: invoke_without_command)
        for name in cmd.list_commands(c):
            found += _walk(cmd.get_command(c, name), (*path, name), c)
        return found
    return [(path, cmd)]


COMMANDS = _walk(typer.main.get_command(app), (), None)
DECLARED = [(" ".join(path), p.opts[0], output_kind(p)) for path, cmd in COMMANDS for p in cmd.params
            if output_kind(p) is not None]


def test_the_walk_finds_the_commands_and_their_outputs():
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"judge", "calibrate", "gate", "validity run", "card", "card diff", "store export"} <= names
    assert ("calibrate", "--out", "folder") in DECLARED and ("gate", "--summary", "file") in DECLARED
    assert ("validity run", "--batch-out", "file") in DECLARED and ("judge", "--store", "store") in DECLARED


def test_every_option_that_looks_like_an_output_is_declared():
    undeclared = [f"{' '.join(path)} {opt}" for path, cmd in COMMANDS for p in cmd.params
                  for opt in getattr(p, "opts", []) if LOOKS_LIKE_OUTPUT.match(opt) and output_kind(p) is None
                  and getattr(p, "metavar", None) != INPUT_METAVAR]
    assert undeclared == [], "declare these with commands.outputs.out_option (and add them to ARGV here)"


# ------------------------------------------------------------------------------------------------ fixtures


class World:
    """The files the command lines below read, under ``root``."""

    def __init__(self, root: Path):
        self.root = root
        self.items = root / "items.jsonl"
        self.items.write_text(json.dumps({"item_id": "i0", "text": "claim", "evidence": "e"}) + "\n")
        self.probes = root / "probes.jsonl"
        shutil.copy(bundled_probes_path(), self.probes)
        self.pairs = length_pairs_file(root)
        self.judgebench = root / "judgebench"
        shutil.copytree(DATA / "judgebench_fixture", self.judgebench)
        self.labels = root / "labels.csv"
        self.labels.write_text("id,label\ni0,1\n")
        self.verdicts = root / "verdicts.jsonl"
        self.verdicts.write_text(json.dumps({"item_id": "i0", "judge_id": "j", "score": 1}) + "\n")
        self.policy = root / "policy.yaml"
        self.policy.write_text("bars:\n  - R >= 0.30\n")
        self.card = root / "card.json"
        self.card.write_text(json.dumps({"judge": "j", "sections": {}}))
        self.card_b = root / "card-b.json"
        self.card_b.write_text(json.dumps({"judge": "j", "sections": {}}))
        self.ledger = root / "ledger.yaml"
        self.ledger.write_text("predictions: []\n")
        self.data_file = root / "data.jsonl"
        self.data_file.write_text(json.dumps({"question": "q", "answer": "a"}) + "\n")
        self.responses = root / "responses.jsonl"
        self.responses.write_text(json.dumps({"prompt": "p", "response": "r"}) + "\n")
        self.results = root / "results.jsonl"
        self.results.write_text("{}\n")
        self.experiment = root / "exp.yaml"
        self.experiment.write_text(f"analysis: validity\nout: {root / 'exp-out'}\nprobes: bundled\n"
                                   "judges:\n  - api:openai/gpt-4o-mini\n")
        # the targets
        self.run = root / "other-run"            # a validity run
        self.run.mkdir()
        write_result(self.run / "result.json", {"judges": {}, "s_floor": 0.9})
        (self.run / "report.html").write_text("<html>a validity report</html>")
        files = {n: file_sha256(self.run / n) for n in ("result.json", "report.html")}
        (self.run / MANIFEST).write_text(json.dumps({"kind": "validity", "run_id": "r1", "files": files}))
        self.world_run = root / "world-run"      # a world run (for validity's own commands)
        self.world_run.mkdir()
        write_result(self.world_run / "result.json", {"arms": ["blind"], "tie_rule": "x", "judges": {}})
        (self.world_run / MANIFEST).write_text(json.dumps({"kind": "world", "run_id": "w1", "files": {
            "result.json": file_sha256(self.world_run / "result.json")}}))
        self.store = root / "paid.sqlite"
        with CallStore(self.store) as cs:   # one paid answer
            cs.put(Verdict(call_key="k1", request_id="r", judge_id="api:x", raw="Score: 5", score=5.0,
                           parse_ok=True, provider="openai", cost_usd=0.01))
        self.notes = root / "notes.md"
        self.notes.write_text("my own notes\n")


def _fresh(w: World, name: str) -> str:
    return str(w.root / "fresh" / name)


# command -> (its command line without the option under test, given the path for that option; the input of
# the same run that the "input" case points the option at). ``{fresh}`` options are new paths.
Argv = Callable[[World, str, str], list[str]]


def _judge(w, opt, target):
    base = ["judge", "--judge", "reference:constant", "--input", str(w.items)]
    return base + (["--out", target] if opt == "--out" else ["--out", _fresh(w, "j"), opt, target])


def _validity(w, opt, target):
    base = ["validity", "run", "--judge", "reference:constant", "--probes", str(w.probes), "--bootstrap", "30",
            "--regrade", "4"]
    if opt == "--out":
        return base + ["--out", target]
    extra = ["--batch", "openai"] if opt == "--batch-out" else []
    return base + ["--out", _fresh(w, "v"), *extra, opt, target]


def _world(sub):
    def argv(w, opt, target):
        base = ["world", sub, "--set", f"halueval:{DATA / 'halueval'}", "--judge", "reference:constant"]
        if opt == "--out":
            return base + ["--out", target]
        extra = ["--batch", "openai"] if opt == "--batch-out" else []
        return base + ["--out", _fresh(w, "w"), *extra, opt, target]
    return argv


def _cap_run(w, opt, target):
    base = ["cap", "run", "--set", f"judgebench:{w.judgebench}", "--published", "--bootstrap", "30"]
    if opt == "--out":
        return base + ["--out", target]
    extra = ["--batch", "openai", "--judge", "api:openai/gpt-4o-mini"] if opt == "--batch-out" else []
    return base + ["--out", _fresh(w, "c"), *extra, opt, target]


def _loop_run(w, opt, target):
    base = ["loop", "run", "--task", "ifeval", "--data", str(DATA / "ifeval"), "--responder", "reference:echo",
            "--regulator", "control", "--rounds", "1"]
    if opt == "--out":
        return base + ["--out", target]
    extra = ["--batch", "openai"] if opt == "--batch-out" else []
    return base + ["--out", _fresh(w, "l"), *extra, opt, target]


def _loop_worlds(w, opt, target):
    base = ["loop", "worlds", "--set", f"halueval:{DATA / 'halueval'}", "--agent", "reference:echo",
            "--max-items", "3"]
    if opt == "--out":
        return base + ["--out", target]
    extra = ["--batch", "openai"] if opt == "--batch-out" else []
    return base + ["--out", _fresh(w, "lw"), *extra, opt, target]


ARGV: dict[tuple[str, str], tuple[Argv, Callable[[World], Path | None]]] = {
    ("judge", "--out"): (_judge, lambda w: w.items),
    ("judge", "--store"): (_judge, lambda w: w.items),
    ("run", "--batch-out"): (lambda w, o, t: ["run", str(w.experiment), "--batch", "openai", o, t],
                             lambda w: w.experiment),
    ("demo", "--out"): (lambda w, o, t: ["demo", o, t], lambda w: None),
    ("store export", "--out"): (lambda w, o, t: ["store", "export", "--store", str(w.store), o, t],
                                lambda w: w.store),
    ("validity run", "--out"): (_validity, lambda w: w.probes),
    ("validity run", "--store"): (_validity, lambda w: w.probes),
    ("validity run", "--batch-out"): (_validity, lambda w: w.probes),
    ("vp audit", "--out"): (lambda w, o, t: ["vp", "audit", "--set", f"jsonl:{w.pairs}?prompt=q&response_a=ra&"
                                             "response_b=rb&label=pref", "--permutations", "3", "--no-transfer",
                                             "--jobs", "1", o, t], lambda w: w.pairs),
    ("cap run", "--out"): (_cap_run, lambda w: w.judgebench),
    ("cap run", "--store"): (_cap_run, lambda w: w.judgebench / "PROVENANCE.json"),
    ("cap run", "--batch-out"): (_cap_run, lambda w: w.judgebench / "PROVENANCE.json"),
    ("cap build", "--out"): (lambda w, o, t: ["cap", "build", "--source", str(w.data_file), "--generator",
                                              "reference:constant", "--gate", "reference:constant", o, t],
                             lambda w: w.data_file),
    ("cap build", "--store"): (lambda w, o, t: ["cap", "build", "--source", str(w.data_file), "--generator",
                                                "reference:constant", "--gate", "reference:constant", "--out",
                                                _fresh(w, "pairs.jsonl"), o, t], lambda w: w.data_file),
    ("probes build", "--out"): (lambda w, o, t: ["probes", "build", "--bases", str(w.items), "--generator",
                                                 "reference:constant", "--verifier", "reference:constant",
                                                 "--audited-family", "x", o, t], lambda w: w.items),
    ("probes build", "--store"): (lambda w, o, t: ["probes", "build", "--bases", str(w.items), "--generator",
                                                   "reference:constant", "--verifier", "reference:constant",
                                                   "--audited-family", "x", "--out", _fresh(w, "p"), o, t],
                                  lambda w: w.items),
    ("probes merge", "--out"): (lambda w, o, t: ["probes", "merge", "--probes", str(w.probes), "--answers",
                                                 str(w.results), o, t], lambda w: w.probes),
    ("probes agreement", "--out"): (lambda w, o, t: ["probes", "agreement", "--probes", str(w.probes), o, t],
                                    lambda w: w.probes),
    ("probes annotate init", "--db"): (lambda w, o, t: ["probes", "annotate", "init", "--probes", str(w.probes),
                                                        "--annotators", "2", o, t], lambda w: w.probes),
    ("probes annotate export", "--out"): (lambda w, o, t: ["probes", "annotate", "export", "--db",
                                                           str(w.root / "study.sqlite"), o, t],
                                          lambda w: w.probes),
    ("check ifeval", "--out"): (lambda w, o, t: ["check", "ifeval", "--prompts", str(w.data_file), "--responses",
                                                 str(w.responses), o, t], lambda w: w.responses),
    ("check gsm8k", "--out"): (lambda w, o, t: ["check", "gsm8k", "--data", str(w.data_file), o, t],
                               lambda w: w.data_file),
    ("check halueval", "--out"): (lambda w, o, t: ["check", "halueval", "--data", str(w.data_file), o, t],
                                  lambda w: w.data_file),
    ("ledger score", "--out"): (lambda w, o, t: ["ledger", "score", "--ledger", str(w.ledger), "--results",
                                                 str(w.results), o, t], lambda w: w.ledger),
    ("ledger report", "--out"): (lambda w, o, t: ["ledger", "report", "--ledger", str(w.ledger), "--results",
                                                  str(w.results), o, t], lambda w: w.ledger),
    ("card diff", "--out"): (lambda w, o, t: ["card", "diff", str(w.card), str(w.card_b), o, t],
                             lambda w: w.card),
    ("card diff", "--html"): (lambda w, o, t: ["card", "diff", str(w.card), str(w.card_b), o, t],
                              lambda w: w.card),
    ("card", "--out"): (lambda w, o, t: ["card", "--judge", "j", "--from", str(w.run), o, t], lambda w: w.run),
    ("loop run", "--out"): (_loop_run, lambda w: w.data_file),
    ("loop run", "--store"): (_loop_run, lambda w: w.data_file),
    ("loop run", "--batch-out"): (_loop_run, lambda w: w.data_file),
    ("loop worlds", "--out"): (_loop_worlds, lambda w: w.data_file),
    ("loop worlds", "--store"): (_loop_worlds, lambda w: w.data_file),
    ("loop worlds", "--batch-out"): (_loop_worlds, lambda w: w.data_file),
    ("world run", "--out"): (_world("run"), lambda w: w.data_file),
    ("world run", "--store"): (_world("run"), lambda w: w.data_file),
    ("world run", "--batch-out"): (_world("run"), lambda w: w.data_file),
    ("world factorial", "--out"): (_world("factorial"), lambda w: w.data_file),
    ("world factorial", "--store"): (_world("factorial"), lambda w: w.data_file),
    ("world factorial", "--batch-out"): (_world("factorial"), lambda w: w.data_file),
    ("calibrate", "--out"): (lambda w, o, t: ["calibrate", "--verdicts", f"replay:{w.verdicts}", "--labels",
                                              str(w.labels), o, t], lambda w: w.labels),
    ("batch ingest", "--store"): (lambda w, o, t: ["batch", "ingest", str(w.results), o, t],
                                  lambda w: w.results),
    ("requests export", "--out"): (lambda w, o, t: ["requests", "export", "--analysis", "validity", "--probes",
                                                    str(w.probes), o, t], lambda w: w.probes),
    ("migrate", "--out"): (lambda w, o, t: ["migrate", "--old", f"replay:{w.verdicts}", "--new",
                                            f"replay:{w.verdicts}", "--items", str(w.items), o, t],
                           lambda w: w.items),
    ("migrate", "--store"): (lambda w, o, t: ["migrate", "--old", f"replay:{w.verdicts}", "--new",
                                              f"replay:{w.verdicts}", "--items", str(w.items), "--out",
                                              _fresh(w, "m"), o, t], lambda w: w.items),
    ("migrate apply", "--out"): (lambda w, o, t: ["migrate", "apply", "--link", str(w.root / "link.json"),
                                                  "--verdicts", f"replay:{w.verdicts}", o, t],
                                 lambda w: w.verdicts),
    ("gate", "--summary"): (lambda w, o, t: ["gate", str(w.policy), "--card", str(w.card), o, t],
                            lambda w: w.policy),
    ("gate", "--junit"): (lambda w, o, t: ["gate", str(w.policy), "--card", str(w.card), o, t],
                          lambda w: w.card),
}


def test_every_declared_output_has_a_command_line_here():
    missing = [(c, o) for c, o, _ in DECLARED if (c, o) not in ARGV]
    assert missing == [], "add a command line for each to ARGV"


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()} | \
        {str(p.relative_to(root)) + "/": "" for p in sorted(root.rglob("*")) if p.is_dir()}


CASES = ("another run's folder", "a call store", "an input of the same run", "a file it did not write")
PARAMS = [pytest.param(c, o, what, case, id=f"{c} {o} onto {case}") for c, o, what in DECLARED
          for case in CASES if not (what == "store" and case == "a call store")]


@pytest.mark.parametrize(("command", "option", "what", "case"), PARAMS)
def test_an_output_refuses_what_it_did_not_write(command, option, what, case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")   # nothing listens: no call can succeed
    w = World(tmp_path)
    argv_of, input_of = ARGV[(command, option)]
    other = w.world_run if command in ("validity run", "run") else w.run
    target = {"another run's folder": other, "a call store": w.store, "a file it did not write": w.notes,
              "an input of the same run": input_of(w)}[case]
    if target is None:
        pytest.skip(f"{command} reads no input")
    before = _tree(tmp_path)
    r = CliRunner().invoke(app, argv_of(w, option, str(target)))
    if command == "gate":
        assert r.exit_code == GATE_BAD_INPUT, r.output
        message = r.output
    else:
        assert isinstance(r.exception, InputError), (r.exit_code, r.output, r.exception)
        message = str(r.exception)
    assert str(target) in message and option in message, message
    assert _tree(tmp_path) == before                     # nothing written, nothing made, nothing removed


# ------------------------------------------------------------------------ the cases the report measured


_ENV = {"COLUMNS": "200", "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}


def _entry(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The real entry point (one test keeps it), in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "judgeaudit.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **_ENV}, cwd=cwd)


@pytest.fixture
def _main(cli_main, monkeypatch):
    """``cli.main`` in this process, in ``cwd``, with the environment ``_entry`` gives the real entry point."""
    def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
        for name, value in _ENV.items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(cwd)
        return cli_main(*args)

    return run


@pytest.mark.parametrize("case", ["calibrate --out onto a validity run", "--batch-out onto a call store",
                                  "--batch-out onto the run's own input"])
def test_the_refusal_is_one_line_exit_2_from_main(case, tmp_path, _main):
    w = World(tmp_path)
    args = {"calibrate --out onto a validity run": ARGV[("calibrate", "--out")][0](w, "--out", str(w.run)),
            "--batch-out onto a call store": _validity(w, "--batch-out", str(w.store)),
            "--batch-out onto the run's own input": _validity(w, "--batch-out", str(w.probes))}[case]
    before = _tree(tmp_path)
    p = _main(args, tmp_path)
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert p.returncode == 2, p.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    assert _tree(tmp_path) == before


def test_gate_summary_onto_a_runs_result_json_is_refused_by_the_real_entry_point(tmp_path):
    w = World(tmp_path)
    before = _tree(tmp_path)
    p = _entry(["gate", str(w.policy), "--card", str(w.card), "--summary", str(w.run / "result.json")], tmp_path)
    assert p.returncode == GATE_BAD_INPUT, p.stderr
    assert [x for x in p.stderr.splitlines() if x.strip()][-1].startswith("error: ")
    assert _tree(tmp_path) == before


def test_a_command_replaces_its_own_earlier_file(tmp_path, monkeypatch):
    """What a command wrote it may write again (a rerun); once someone else changed the file, it is no longer
    the command's. (A run resuming its own folder: tests/cli/test_output_sets_per_command.py.)"""
    monkeypatch.chdir(tmp_path)
    w = World(tmp_path)
    out = tmp_path / "calls.jsonl"
    argv = ["store", "export", "--store", str(w.store), "--out", str(out)]
    assert CliRunner().invoke(app, argv).exit_code == 0
    first = out.read_text()
    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 0, r.output                      # its own earlier output
    assert out.read_text() == first
    out.write_text(first + "\nmy edit\n")                   # now partly the user's
    r = CliRunner().invoke(app, argv)
    assert isinstance(r.exception, InputError) and "--out" in str(r.exception)
    assert out.read_text().endswith("my edit\n")
