"""The loop and validation-power options declared once: an ``analysis: loop`` file takes ``template``, ``nli`` and
``temperature`` as ``judgeaudit loop run`` does; an ``analysis: vp`` file takes every option of ``judgeaudit vp
audit`` (found by reading the click command and the pydantic model) and runs the same audit; a card names the
default runs the declarations give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_declared_options import _as_flags, _command, _flags, _singular, _write
from testkit import length_pairs_file
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.experiment import EXPERIMENTS, load_experiment


def test_a_loop_file_takes_template_nli_and_temperature(tmp_path):
    (tmp_path / "ifeval").mkdir()
    p = _write(tmp_path, "analysis: loop\nout: out\ntask: ifeval\ndata: ifeval\nresponder: reference:echo\n"
                         "regulators: [control]\ntemplate: judgeaudit-geval\nnli: lexical\ntemperature: 0.7\n")
    exp = load_experiment(p)
    assert (exp.template, exp.nli, exp.temperature) == ("judgeaudit-geval", "lexical", 0.7)
    assert exp.data == tmp_path / "ifeval"


def test_a_loop_file_checks_the_declared_rules_naming_the_line(tmp_path):
    (tmp_path / "ifeval").mkdir()
    p = _write(tmp_path, "analysis: loop\nout: out\ntask: ifeval\ndata: ifeval\nresponder: reference:echo\n"
                         "regulators: [control]\ntemperature: 3\n")
    with pytest.raises(InputError) as e:
        load_experiment(p)
    assert (e.value.line, e.value.field) == (7, "temperature") and "at most 2" in str(e.value)


def test_the_vp_command_and_the_vp_file_take_the_same_options():
    cmd = _command("vp", "audit")
    file = _singular(_as_flags(EXPERIMENTS["vp"]), cmd)
    command = _flags(cmd)
    assert command - file == {"--backend", "--ray-address"}, "judgeaudit run takes these two as its own flags"
    assert file - command == set()


def _audit_args(pairs: Path) -> list[str]:
    return ["--set", f"jsonl:{pairs}?prompt=q&response_a=ra&response_b=rb&label=pref", "--permutations", "3",
            "--no-transfer", "--jobs", "1", "--seed", "1", "--mode", "paired"]


def test_a_vp_file_runs_the_audit_the_command_runs(tmp_path):
    pairs = length_pairs_file(tmp_path)
    cli = CliRunner().invoke(app, ["vp", "audit", *_audit_args(pairs), "--out", str(tmp_path / "cli")])
    assert cli.exit_code == 0, cli.output
    exp = _write(tmp_path, "analysis: vp\nout: file\nsets: ['jsonl:pairs.jsonl?prompt=q&response_a=ra&response_b=rb"
                           "&label=pref']\npermutations: 3\nno_transfer: true\njobs: 1\nseed: 1\nmode: paired\n")
    yml = CliRunner().invoke(app, ["run", str(exp)])
    assert yml.exit_code == 0, yml.output
    a, b = (json.loads((tmp_path / d / "result.json").read_text()) for d in ("cli", "file"))
    assert a["sets"] == b["sets"] and a["config"] == b["config"]


def test_a_vp_file_refuses_a_flag_of_the_judge_calling_commands(tmp_path):
    pairs = length_pairs_file(tmp_path)
    exp = _write(tmp_path, f"analysis: vp\nout: o\nsets: ['jsonl:{pairs}?prompt=q&response_a=ra&response_b=rb"
                           "&label=pref']\n")
    r = CliRunner().invoke(app, ["run", str(exp), "--mlflow", "sqlite:///m.db"])
    assert isinstance(r.exception, InputError) and "a vp experiment takes no --mlflow" in str(r.exception)
    p = _write(tmp_path, "analysis: vp\nout: o\nsets: ['jsonl:missing.jsonl']\n")
    with pytest.raises(InputError) as e:
        load_experiment(p)
    assert (e.value.line, e.value.field) == (3, "sets") and "missing.jsonl: not found" in str(e.value)


def test_the_cards_default_loop_and_vp_runs_are_the_declared_ones():
    from judgeaudit.analyses.validation_power.options import DEFAULTS as VP_DEFAULTS
    from judgeaudit.card.defaults import DEFAULT_COMMANDS
    from judgeaudit.loop.options import DEFAULT_RUN, OPTIONS

    line = DEFAULT_COMMANDS["loop"]
    for name, value in DEFAULT_RUN.items():
        for x in value if isinstance(value, list) else [value]:
            assert f"{OPTIONS[name].option} {x}" in line
    assert VP_DEFAULTS == {"mode": "both", "permutations": 20, "seed": 0, "no_transfer": False}


@pytest.mark.parametrize(("path", "module"), [(("calibrate",), "judgeaudit.analyses.calibrate.options"),
                                              (("vp", "audit"), "judgeaudit.analyses.validation_power.options"),
                                              (("loop", "run"), "judgeaudit.loop.options")])
def test_a_commands_flags_are_its_declared_options(path, module):
    import importlib

    options = importlib.import_module(module).OPTIONS
    assert _flags(_command(*path)) - {"--backend", "--ray-address"} == {o.option for o in options.on_command()}
