"""A command and its experiment file take the same options: what ``judgeaudit validity run`` takes as a flag, an
``analysis: validity`` file takes as a key (or ``judgeaudit run`` as its own flag), and the reverse — found by
reading the click command and the pydantic model, not from a list. A key an analysis's command does not take is
refused with one line naming the file, the line and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.experiment import EXPERIMENTS, load_experiment

ROOT = typer.main.get_command(app)
DONE = ("validity", "cap", "world", "loop")
"""The analyses whose options are declared once (their command and file generated from the declaration)."""


def _command(*path: str):
    from typer._click.core import Context

    cmd, ctx = ROOT, Context(ROOT, info_name="judgeaudit")
    for name in path:
        cmd = cmd.get_command(ctx, name)
        ctx = Context(cmd, info_name=name, parent=ctx)
    return cmd


def _flags(cmd) -> set[str]:
    """Every flag of a click command (its first spelling), hidden ones left out."""
    return {p.opts[0] for p in cmd.params if p.param_type_name == "option" and not p.hidden}


def _as_flags(model) -> set[str]:
    """The experiment keys of a pydantic model as flags: ``s_floor`` → ``--s-floor``; a list key names the
    repeatable flag of its singular (``judges`` → ``--judge``)."""
    out = set()
    for name, f in model.model_fields.items():
        key = f.alias or name
        if key == "analysis":
            continue
        out.add("--" + key.replace("_", "-"))
    return out


def _singular(flags: set[str], cmd) -> set[str]:
    repeatable = {p.opts[0] for p in cmd.params if getattr(p, "multiple", False)}
    return {f[:-1] if f[:-1] in repeatable else f for f in flags}


@pytest.mark.parametrize("analysis", DONE)
def test_the_command_and_the_experiment_file_take_the_same_options(analysis):
    cmd = _command(analysis, "run")
    runner = _flags(_command("run")) - {"--allow-code"}   # judgeaudit run's own flags, for every analysis
    file = _singular(_as_flags(EXPERIMENTS[analysis]), cmd)
    command = _flags(cmd)
    assert command - (file | runner) == set(), "the command takes these; the experiment file does not"
    assert file - command == set(), "the experiment file takes these; the command does not"
    assert runner - command == set(), "judgeaudit run takes these for the analysis; its command does not"


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "exp.yaml"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize(("key", "value"), [("seed", "1"), ("store", "calls.sqlite"), ("concurrency", "2")])
def test_a_card_file_refuses_what_the_card_command_does_not_take(tmp_path, key, value):
    (tmp_path / "runs").mkdir()
    p = _write(tmp_path, f"analysis: card\nout: out\njudge: j\nfrom: [runs]\n{key}: {value}\n")
    with pytest.raises(InputError) as e:
        load_experiment(p)
    assert (str(e.value.path), e.value.line, e.value.field) == (str(p), 5, key)
    assert f"a card experiment takes no '{key}': its command has no such option" in str(e.value)


def _registered_ledger(path: Path) -> Path:
    from judgeaudit.ledger.commit import commit
    from judgeaudit.ledger.model import Ledger, Prediction
    from judgeaudit.ledger.store import write_ledger

    led = Ledger(predictions=(Prediction.model_validate(
        {"id": "P1", "run": "validity", "clauses": [{"metric": "judges.*.S", "bar": ">= 0"}]}),))
    write_ledger(path, commit(led, at="2026-01-01T00:00:00+00:00", git=None)[0])
    return path


def _probes(tmp_path: Path, bases: int = 4) -> Path:
    """The bundled probes of the first ``bases`` base items."""
    from judgeaudit.probes.io import bundled_probes_path

    lines = bundled_probes_path().read_text(encoding="utf-8").splitlines()
    keep = list(dict.fromkeys(json.loads(ln)["base_id"] for ln in lines))[:bases]
    p = tmp_path / "probes.jsonl"
    p.write_text("\n".join(ln for ln in lines if json.loads(ln)["base_id"] in keep) + "\n", encoding="utf-8")
    return p


def test_a_validity_file_takes_template_ledger_and_strict_register_as_the_command_does(tmp_path, fake_server,
                                                                                        monkeypatch):
    """The same run through the command line and through a file: the same template recorded, the same register,
    and ``strict_register`` exits 3 after writing, as ``--strict-register`` does."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda prompt: "4")
    led = _registered_ledger(tmp_path / "ledger.yaml")
    probes = _probes(tmp_path)
    judge = "api:openai/fake-model"
    common = ["--probes", str(probes), "--judge", judge, "--bootstrap", "20", "--regrade", "0",
              "--api-base", srv.base_url]
    cli = CliRunner().invoke(app, ["validity", "run", *common, "--template", "judgeaudit-geval", "--ledger", str(led),
                                   "--strict-register", "--out", str(tmp_path / "cli")])
    exp = _write(tmp_path, f"analysis: validity\nout: file\nprobes: probes.jsonl\njudges: ['{judge}']\n"
                           f"bootstrap: 20\nregrade: 0\napi_base: {srv.base_url}\ntemplate: judgeaudit-geval\n"
                           "ledger: ledger.yaml\nstrict_register: true\n")
    yml = CliRunner().invoke(app, ["run", str(exp)])
    assert cli.exit_code == yml.exit_code == 3, (cli.output, yml.output)
    a, b = (json.loads((tmp_path / d / "result.json").read_text()) for d in ("cli", "file"))
    assert a["judges"][judge]["template"] == b["judges"][judge]["template"]
    assert a["judges"][judge]["template"]["name"] == "judgeaudit-geval"
    ra, rb = (json.loads((tmp_path / d / "register.json").read_text())["headlines"] for d in ("cli", "file"))
    assert ra == rb and any(h["registered"] for h in ra) and not all(h["registered"] for h in ra)


@pytest.fixture
def tiny_world(monkeypatch):
    """``world run`` on the tiny world items (set 'tiny:x') with a scripted oracle judge: no model, no network."""
    import sys
    import types

    from world_fixtures import ScriptedJudge, oracle_reply, tiny_items

    mod = types.ModuleType("judgeaudit.datasets.world")
    mod.load_world = lambda spec: types.SimpleNamespace(
        items=tuple(tiny_items()), provenance={"spec": spec, "files": [], "excluded": {}})
    monkeypatch.setitem(sys.modules, "judgeaudit.datasets.world", mod)
    monkeypatch.setattr("judgeaudit.commands.common.make_judge", lambda spec, **kw: ScriptedJudge(oracle_reply, spec))


def test_a_world_file_takes_correlate_and_alternative_as_the_command_does(tmp_path, tiny_world):
    """``correlate`` (refused by a world file before its options were declared once) and the command's default
    ``alternative`` (``greater``; a file defaulted to ``two-sided``): the same Spearman rows both ways."""
    (tmp_path / "x").mkdir()
    common = ["--votes", "1", "--bootstrap", "20", "--permutations", "9"]
    cli = CliRunner().invoke(app, ["world", "run", "--set", "tiny:x", "--judge", "reference:oracle", *common,
                                   "--correlate", "output_chars", "--out", str(tmp_path / "cli")])
    exp = _write(tmp_path, "analysis: world\nout: file\nset: tiny:x\njudges: [reference:oracle]\nvotes: 1\n"
                           "bootstrap: 20\npermutations: 9\ncorrelate: [output_chars]\n")
    yml = CliRunner().invoke(app, ["run", str(exp)])
    assert cli.exit_code == yml.exit_code == 0, (cli.output, yml.output)
    a, b = (json.loads((tmp_path / d / "result.json").read_text())["spearman"] for d in ("cli", "file"))
    assert a == b and {r["covariate"] for r in a} == {"output_chars"}
    assert {r["alternative"] for r in a} == {"greater"}

