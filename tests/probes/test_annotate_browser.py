"""The annotation page in headless Chromium (Debian's ``chromium`` driven by Playwright).

Needs ``apt-get install -y chromium`` and ``pip install playwright==1.65.2``. Without them these
tests fail with a clear message when ``CI=true`` and skip otherwise.
"""

from __future__ import annotations

import socket
import sqlite3
import threading
import time
from pathlib import Path

import httpx
import pytest
from annotate_fixtures import study_probes
from chromium import require_browser

from judgeaudit.probes.annotate import init_study
from judgeaudit.probes.annotate.app import create_app

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def server(tmp_path):
    """A study with 3 annotators served by uvicorn on 127.0.0.1 in a thread."""
    require_browser()
    import uvicorn

    db = tmp_path / "study.sqlite"
    tokens = init_study(db, study_probes(), 3, seed=5)
    port = _free_port()
    srv = uvicorn.Server(uvicorn.Config(create_app(db), host="127.0.0.1", port=port, log_level="warning"))
    th = threading.Thread(target=srv.run, daemon=True)
    th.start()
    deadline = time.monotonic() + 15
    while not srv.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}", tokens, db
    srv.should_exit = True
    th.join(timeout=10)


def _at(page, position, timeout=10_000):
    page.wait_for_selector(f'body[data-position="{position}"]', timeout=timeout)


def _locate(base, token, needle):
    """(position, side) of the pair whose text holds ``needle``, in this annotator's stream."""
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as c:
        for pos in range(1, 7):
            d = c.get(f"/api/items/{pos}").json()
            for side in ("a", "b"):
                if needle in d[side]:
                    return pos, side.upper()
    raise AssertionError(needle)


def _answers(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT annotator_id, answer, basis, same_facts FROM answers").fetchall()
    finally:
        con.close()


def test_keyboard_labelling_then_close_and_resume_at_fourth(server, browser):
    base, tokens, db = server
    link = f"{base}/#t={tokens.annotator_tokens['a1']}"
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(link)
    _at(page, 1)
    assert page.text_content("#progress").startswith("0 of 6 answered")
    for pos, keys in [(1, ["3", "y"]), (2, ["4", "n"]), (3, ["3", "y"])]:
        for k in keys:
            page.keyboard.press(k)
        page.keyboard.press("Enter")
        _at(page, pos + 1)
    assert page.text_content("#progress").startswith("3 of 6 answered")
    page.close()
    ctx.close()
    assert sorted(a for _, a, _, _ in _answers(db)) == ["cannot_tell", "neither", "neither"]

    ctx = browser.new_context()       # a fresh tab: nothing kept in the browser
    page = ctx.new_page()
    page.goto(link)
    _at(page, 4)
    assert page.text_content("#progress").startswith("3 of 6 answered")
    # the earlier answers are there when navigating back
    page.keyboard.press("ArrowLeft")
    _at(page, 3)
    assert page.is_checked('input[name="answer"][value="neither"]')
    ctx.close()


def _goto_position(page, start, target):
    for p in range(start, target):
        page.keyboard.press("ArrowRight")
        _at(page, p + 1)


def test_ascii_basis_matches_curly_quotes_and_dashes_and_two_spans_accepted(server, browser):
    base, tokens, db = server
    token = tokens.annotator_tokens["a2"]
    pos, side = _locate(base, token, "markedly lowered")
    page = browser.new_page()
    page.goto(f"{base}/#t={token}")
    _at(page, 1)
    _goto_position(page, 1, pos)
    key = "1" if side == "A" else "2"

    # a span the sentence does not hold is refused with a visible message, and nothing is saved
    page.keyboard.press(key)
    page.keyboard.type("dramatically lowered")
    page.keyboard.press("Escape")
    page.keyboard.press("y")
    page.keyboard.press("Enter")
    page.wait_for_selector("#status.bad")
    assert "not found" in page.text_content("#status")
    assert _answers(db) == []

    # typed with ASCII quotes and hyphens; the sentence has curly quotes, an en dash, a non-breaking hyphen
    page.fill("#basis", "")
    page.keyboard.type('The "new" method markedly lowered error by 9% in 2019-2021 in a non-tidal basin')
    page.keyboard.press("Control+Enter")
    _at(page, pos + 1 if pos < 6 else "done")
    (row,) = _answers(db)
    assert row[1] == side and row[2].startswith('The "new" method')

    # two non-contiguous spans, one per line and with ' ... ', on the same pair, revised
    if pos < 6:
        page.keyboard.press("ArrowLeft")
    else:
        page.click("#review")
        _at(page, 1)
        _goto_position(page, 1, pos)
    _at(page, pos)
    page.fill("#basis", "")
    page.click("#basis")
    page.keyboard.type("markedly lowered")
    page.keyboard.press("Enter")                       # a new line inside the field separates spans
    page.keyboard.type("\u201csubstantially\u201d ... so")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(f'body:not([data-position="{pos}"])')
    (row,) = _answers(db)
    assert row[2] == "markedly lowered\n\u201csubstantially\u201d ... so"


def test_markup_in_a_probe_text_is_shown_as_text(server, browser):
    base, tokens, db = server
    token = tokens.annotator_tokens["a3"]
    pos, side = _locate(base, token, "<script>")
    page = browser.new_page()
    page.goto(f"{base}/#t={token}")
    _at(page, 1)
    _goto_position(page, 1, pos)
    assert page.evaluate("window.__pwned") is None
    for sel in ("#text-a", "#text-b"):
        assert page.evaluate(f"document.querySelector('{sel}').children.length") == 0
    assert "<script>window.__pwned=1</script>" in page.text_content("#text-a") + page.text_content("#text-b")


def test_bad_link_shows_an_error(server, browser):
    base, tokens, db = server
    page = browser.new_page()
    page.goto(f"{base}/#t=wrong")
    page.wait_for_selector("#fatal:not([hidden])")
    assert "not valid" in page.text_content("#fatal")


def test_missing_browser_fails_under_ci_and_skips_otherwise(monkeypatch):
    import chromium

    monkeypatch.setattr(chromium, "CHROMIUM", Path("/nonexistent/chromium"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="browser tests need /nonexistent/chromium"):
        chromium.require_browser()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y chromium"):
        chromium.require_browser()
