"""A committed ledger cannot be truncated and re-committed: the chain's head is recorded beside the
ledger and in git; non-UTF-8 input is refused with one line naming the file and line."""

from __future__ import annotations

import json
import subprocess

import pytest
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.ledger.commit import head_path, verify
from judgeaudit.ledger.store import read_ledger, write_ledger


def _cli(*args):
    return CliRunner().invoke(app, list(map(str, args)))


def _two_commits(ledger):
    assert _cli("ledger", "add", "--ledger", ledger, "--id", "P1", "--clause", "judges.j.S >= 0.90").exit_code == 0
    assert _cli("ledger", "commit", "--ledger", ledger).exit_code == 0
    assert _cli("ledger", "add", "--ledger", ledger, "--id", "P2", "--clause", "judges.j.R >= 0.90").exit_code == 0
    assert _cli("ledger", "commit", "--ledger", ledger).exit_code == 0


def _truncate_and_weaken(ledger):
    """Delete the trailing commit record, weaken P2's bar 0.90 → 0.30 and re-commit."""
    led = read_ledger(ledger)
    p2 = led.prediction("P2")
    weak = p2.model_copy(update={"clauses": (p2.clauses[0].model_copy(update={"bar": ">= 0.30", "value": 0.30}),)})
    write_ledger(ledger, led.model_copy(update={"commits": led.commits[:-1],
                                                "predictions": (led.predictions[0], weak)}))
    return _cli("ledger", "commit", "--ledger", ledger)


def test_a_truncated_ledger_is_refused_by_its_head_file(tmp_path):
    ledger = tmp_path / "preds.yaml"
    _two_commits(ledger)
    head = json.loads(head_path(ledger).read_text())
    assert head["entries"] == 2 and head["head"] == read_ledger(ledger).commits[-1].sha256
    res = _truncate_and_weaken(ledger)
    assert isinstance(res.exception, InputError), res.output
    assert str(res.exception) == (f"{ledger}: field 'commits': the commit chain holds 1 entries, but its head file "
                                  f"preds.yaml.head records 2 ending in {head['head'][:12]}: commit records were "
                                  "removed or replaced")
    with pytest.raises(InputError, match="commit records were removed"):
        verify(read_ledger(ledger), ledger)


def test_in_git_the_commit_is_recorded_and_truncation_is_caught_without_the_head_file(tmp_path, monkeypatch):
    for k in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(k, "t")
    for k in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(k, "t@example.org")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "other.txt").write_text("staged, not part of the ledger commit")
    subprocess.run(["git", "-C", str(tmp_path), "add", "other.txt"], check=True)
    ledger = tmp_path / "preds.yaml"
    _two_commits(ledger)
    git = lambda *a: subprocess.run(["git", "-C", str(tmp_path), *a], capture_output=True, text=True,  # noqa: E731
                                    check=True).stdout
    # the git commit holds the predictions it froze (and only the ledger and its head file)
    assert "P2" in git("show", "HEAD:preds.yaml") and git("show", "--name-only", "--format=", "HEAD").split() == [
        "preds.yaml", "preds.yaml.head"]
    assert git("log", "--format=%s").splitlines()[0].startswith("judgeaudit ledger: commit P2 (sha256 ")
    head_path(ledger).unlink()
    res = _truncate_and_weaken(ledger)
    assert isinstance(res.exception, InputError), res.output
    assert "does not extend the version of this ledger in git commit" in str(res.exception)


def test_non_utf8_text_is_refused_at_add_and_a_bad_byte_in_the_file_names_its_line(tmp_path):
    ledger = tmp_path / "preds.yaml"
    res = _cli("ledger", "add", "--ledger", ledger, "--id", "P1", "--clause", "x.S >= 0.9", "--text", "caf\udce9")
    assert isinstance(res.exception, InputError), res.output
    assert str(res.exception).startswith("field '--text': --text is not valid UTF-8")
    assert not ledger.exists()
    assert _cli("ledger", "add", "--ledger", ledger, "--id", "P1", "--clause", "x.S >= 0.9").exit_code == 0
    assert _cli("ledger", "commit", "--ledger", ledger).exit_code == 0   # commit still works
    lines = ledger.read_bytes().splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines) if b"id: P1" in line)
    lines[n] = lines[n].replace(b"P1", b"P\xe91")
    ledger.write_bytes(b"".join(lines))
    with pytest.raises(InputError) as e:
        read_ledger(ledger)
    col = lines[n].index(b"\xe9") + 1
    assert str(e.value) == f"{ledger}:{n + 1}: byte b'\\xe9' at column {col} is not UTF-8 (a ledger is UTF-8 text)"


@pytest.mark.parametrize("args, field", [
    (["--id", "", "--clause", "x.S >= 0.9"], "--id"),
    (["--id", "P1", "--clause", "x.S >= 0.9", "--clause", "x.S >= 0.8"], "--clause"),   # two clauses, no letters
])
def test_a_bad_add_blames_the_option_that_gave_the_field(tmp_path, args, field):
    ledger = tmp_path / "preds.yaml"
    res = _cli("ledger", "add", "--ledger", ledger, *args)
    assert isinstance(res.exception, InputError), res.output
    assert res.exception.field == field, str(res.exception)
    assert not ledger.exists()
