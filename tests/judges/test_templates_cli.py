"""``judgeaudit templates list|show`` and bad template input: one ``error: FILE:LINE: field …`` line, exit 2,
no call made and no output written."""

from __future__ import annotations

import traceback

from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.judges.templates import get_template

BAD = "name: mine\nversion: 1\nform: graded\nuser: 'Claim: {{ text }}'\n"   # no scale


def _invoke(argv: list) -> tuple[int, str]:
    """The CLI in-process as ``judgeaudit.cli.main`` runs it: an InputError is one line and exit 2."""
    r = CliRunner().invoke(app, [str(a) for a in argv])
    if isinstance(r.exception, InputError):
        return 2, r.output + f"error: {r.exception}\n"
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return 1, r.output + "".join(traceback.format_exception(r.exception))
    return r.exit_code, r.output


def _one_error(log: str, *needles: str) -> None:
    errors = [line for line in log.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in log, log
    assert all(n in errors[0] for n in needles), errors[0]


def test_list_and_show():
    rc, log = _invoke(["templates", "list"])
    assert rc == 0 and "mt-bench-single" in log and "arena-hard-pair" in log and "judgeaudit-graded" in log
    rc, log = _invoke(["templates", "show", "mt-bench-single"])
    t = get_template("mt-bench-single")
    assert rc == 0 and t.ref()["sha256"] in log and "scale: 1-10 (a higher grade is better)" in log
    assert "Rating: [[5]]" in log and "source: Zheng et al. 2023" in log


def test_a_bad_template_file(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    rc, log = _invoke(["templates", "show", f])
    assert rc == 2
    _one_error(log, f"{f}:1", "field 'scale'", "needs a scale")
    f.write_text(BAD.replace("form: graded\n", "form: graded\nscale: {min: 1, max: 5}\nparser: {json: ''}\n"))
    rc, log = _invoke(["templates", "show", f])
    assert rc == 2
    _one_error(log, f"{f}:5", "field 'parser'", "needs a path")


def test_validity_refuses_a_bad_template_before_any_call(tmp_path, fake_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda prompt: "Rating: [[7]]")
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    out = tmp_path / "out"
    base = ["validity", "run", "--judge", "api:openai/judge-model", "--api-base", srv.base_url, "--bootstrap", "20",
            "--regrade", "0", "--out", out]
    rc, log = _invoke([*base, "--template", f])
    assert rc == 2
    _one_error(log, f"{f}:1", "field 'scale'")
    # a template that names a field the probes lack, and one of another form: refused before any call
    g = tmp_path / "needs-prompt.yaml"
    g.write_text(BAD.replace("form: graded\n", "form: graded\nscale: {min: 1, max: 10}\n")
                 .replace("'Claim: {{ text }}'", "'Question: {{ prompt }} Claim: {{ text }}'"))
    rc, log = _invoke([*base, "--template", g])
    assert rc == 2
    _one_error(log, "field 'template'", "'prompt' is undefined", "has no such field")
    rc, log = _invoke([*base, "--template", "mt-bench-pair"])
    assert rc == 2
    _one_error(log, "field 'template'", "answers pairwise requests, not graded")
    assert srv.requests == [] and not (out / "result.json").exists()


def test_an_experiment_file_names_the_template_line(tmp_path):
    exp = tmp_path / "exp.yaml"
    exp.write_text("analysis: validity\nout: out\njudges:\n  - spec: api:openai/judge-model\n"
                   "    template: missing.yaml\nbootstrap: 20\n")
    rc, log = _invoke(["run", exp])
    assert rc == 2
    _one_error(log, f"{exp}:5", "field 'judges.0.template'", "missing.yaml: not found")
    (tmp_path / "bad.yaml").write_text(BAD)
    exp.write_text(exp.read_text().replace("missing.yaml", "bad.yaml"))
    rc, log = _invoke(["run", exp])
    assert rc == 2
    _one_error(log, "bad.yaml:1", "field 'scale'")
