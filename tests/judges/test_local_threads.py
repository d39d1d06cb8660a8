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
