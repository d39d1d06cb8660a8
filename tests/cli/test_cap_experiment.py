"""An ``analysis: cap`` experiment file runs ``judgeaudit cap run`` from the same declaration
(``analyses.cap.options``): the same numbers as the command line, and every key checked, naming its file and line,
before a set is read or a judge is called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import judgeaudit
from judgeaudit.analyses.cap.options import DEFAULTS, OPTIONS
from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.experiment import CapExperiment, load_experiment

DATA = Path(judgeaudit.__file__).parent / "data"
FIXTURE = DATA / "judgebench_fixture"


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "exp.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def _numbers(d: dict) -> dict:
    """A CAP result without what differs between two runs of the same options (its run's id and time, its paths)."""
    return {k: v for k, v in d.items() if k not in ("run_id", "created_at", "inputs", "answers")}


def test_a_cap_file_gives_the_numbers_the_command_gives(tmp_path, fake_server, monkeypatch):
    """Published verdicts and a live api judge, the template and the seed, through the command line and a file
    with its set path relative to the file: the same result."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda prompt: "[[A]]")
    (tmp_path / "sets").symlink_to(FIXTURE)
    judge = "api:openai/fake-model"
    cli = CliRunner().invoke(app, ["cap", "run", "--set", f"judgebench:{FIXTURE}", "--published", "--judge", judge,
                                   "--api-base", srv.base_url, "--template", "judgeaudit-pairwise", "--bootstrap",
                                   "40", "--seed", "3", "--out", str(tmp_path / "cli")])
    assert cli.exit_code == 0, cli.output
    exp = _write(tmp_path, f"analysis: cap\nout: file\nsets: ['judgebench:sets']\npublished: true\n"
                           f"judges: ['{judge}']\napi_base: {srv.base_url}\ntemplate: judgeaudit-pairwise\n"
                           "bootstrap: 40\nseed: 3\n")
    yml = CliRunner().invoke(app, ["run", str(exp)])
    assert yml.exit_code == 0, yml.output
    a, b = (json.loads((tmp_path / d / "result.json").read_text()) for d in ("cli", "file"))
    assert _numbers(a) == _numbers(b)
    assert a["settings"] == {"n_boot": 40, "seed": 3, "failures": "exclude", "level": 0.95}
    assert a["sets"]["judgebench"]["judges"][judge]["template"]["name"] == "judgeaudit-pairwise"


@pytest.mark.parametrize(("line", "field", "words"), [
    ("bootstrap: -1", "bootstrap", "must be ≥ 0"),
    ("bootstrap: 1000000", "bootstrap", "judgeaudit's bound"),
    ("concurrency: 0", "concurrency", "must be ≥ 1"),
    ("sets: ['judgebench:nowhere']", "sets", "not found"),
    ("human: nowhere.csv", "human", "not found"),
    ("evaluator: 'python:mod:fn'", "evaluator", "python"),
    ("generator: 'python:mod:fn'", "generator", "python"),
    ("judge: local", "judge", "a cap experiment takes no 'judge'"),
])
def test_a_bad_key_is_refused_with_its_file_and_line_before_anything_runs(tmp_path, line, field, words,
                                                                            monkeypatch, cli_main):
    called = []
    monkeypatch.setattr("judgeaudit.commands.cap.run_cap", lambda *a, **k: called.append(1))
    text = f"analysis: cap\nout: out\nsets: ['judgebench:{FIXTURE}']\npublished: true\n"
    text = "\n".join(ln for ln in text.splitlines() if not ln.startswith(line.split(":")[0] + ":")) + f"\n{line}\n"
    p = _write(tmp_path, text)
    n = text.splitlines().index(line) + 1
    r = cli_main("run", p)   # the entry point: a file's python: spec is refused there (judgeaudit.consent)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and called == []
    assert f"{p}:{n}: field '{field}" in r.stderr and words in r.stderr
    assert not (tmp_path / "out").exists()
    if "python" not in line:
        with pytest.raises(InputError) as e:
            load_experiment(p)
        assert (str(e.value.path), e.value.line, e.value.field.split(".")[0]) == (str(p), n, field)


def test_the_file_model_and_the_default_run_take_the_declared_defaults():
    fields = CapExperiment.model_fields
    for o in OPTIONS.in_file():
        if not o.required and o.name in fields:
            assert fields[o.name].default == o.default, o.name
    assert DEFAULTS == {"bootstrap": 1000, "seed": 0, "failures": "exclude"}
    from judgeaudit.commands.cap import run_cap
    import inspect

    sig = inspect.signature(run_cap).parameters
    assert (sig["n_boot"].default, sig["seed"].default, sig["failures"].default) == (
        DEFAULTS["bootstrap"], DEFAULTS["seed"], DEFAULTS["failures"])


def test_an_empty_judge_list_is_refused_and_an_absent_one_is_none(tmp_path):
    p = _write(tmp_path, f"analysis: cap\nout: out\nsets: ['judgebench:{FIXTURE}']\njudges: []\n")
    with pytest.raises(InputError) as e:
        load_experiment(p)
    assert e.value.line == 4 and e.value.field == "judges"
    p = _write(tmp_path, f"analysis: cap\nout: out\nsets: ['judgebench:{FIXTURE}']\npublished: true\n")
    assert load_experiment(p).judges is None
