"""The local judge's compute-thread setting (no model is loaded: the bad value fails first)."""

from __future__ import annotations

import pytest

from judgeaudit.errors import InputError
from judgeaudit.judges.local import load_model


@pytest.mark.parametrize("raw", ["0", "two", "-1", ""])
def test_a_bad_thread_count_names_the_variable(monkeypatch, raw):
    monkeypatch.setenv("JUDGEAUDIT_LOCAL_THREADS", raw)
    with pytest.raises(InputError, match="positive integer") as e:
        load_model(n_ctx=512)
    assert e.value.field == "JUDGEAUDIT_LOCAL_THREADS"


@pytest.mark.parametrize("raw, expected", [(None, "auto"), ("auto", "auto"), (" Auto ", "auto"), ("1", [1])])
def test_the_thread_count_is_chosen_unless_fixed(monkeypatch, raw, expected):
    from judgeaudit.judges import local
    from judgeaudit.judges.threads import candidates, usable_cores

    if raw is None:
        monkeypatch.delenv("JUDGEAUDIT_LOCAL_THREADS", raising=False)
    else:
        monkeypatch.setenv("JUDGEAUDIT_LOCAL_THREADS", raw)
    llm = load_model(n_ctx=512)
    options = getattr(llm, local._THREADS).options
    assert options == (candidates(usable_cores()) if expected == "auto" else expected)


@pytest.mark.parametrize("raw", ["²", "١", "1.5", "100000", "99999999999999999999"])
def test_a_thread_count_is_ascii_digits_within_the_machines_cpus(monkeypatch, raw):
    monkeypatch.setenv("JUDGEAUDIT_LOCAL_THREADS", raw)
    with pytest.raises(InputError, match="positive integer at most") as e:
        load_model(n_ctx=512)
    assert e.value.field == "JUDGEAUDIT_LOCAL_THREADS"


def test_a_bad_thread_count_is_one_line_at_the_command_line(monkeypatch, tmp_path, cli_main):
    monkeypatch.setenv("JUDGEAUDIT_LOCAL_THREADS", "100000")
    items = tmp_path / "items.jsonl"
    items.write_text('{"item_id": "a", "text": "t"}\n')
    r = cli_main("judge", "--judge", "local", "--input", items, "--out", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "JUDGEAUDIT_LOCAL_THREADS" in lines[0] and "100000" in lines[0], r.stderr
