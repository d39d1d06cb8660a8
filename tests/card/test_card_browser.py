"""card.html in headless Chromium (Debian's ``chromium`` driven by Playwright) at desktop and phone
widths: one page under 1 MB, verdict first, the charts drawn, nothing wider than the phone's screen.
Screenshots are left in the test's folder (``card-desktop.png``, ``card-phone.png``).

Needs ``apt-get install -y chromium`` and ``pip install playwright==1.65.2``; without them these tests
fail with a clear message when ``CI=true`` and skip otherwise."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from test_card import J, _all_present
from typer.testing import CliRunner

from judgeaudit.cli import app

pytestmark = pytest.mark.browser


def _browser_helpers():
    """The annotation app's browser test module (its Chromium path, flags and requirement check)."""
    import sys

    probes = Path(__file__).parents[1] / "probes"
    if str(probes) not in sys.path:
        sys.path.insert(0, str(probes))      # its own fixtures module
    path = probes / "test_annotate_browser.py"
    spec = importlib.util.spec_from_file_location("_annotate_browser", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_B = _browser_helpers()
ARGS, CHROMIUM, _require_browser = _B.ARGS, _B.CHROMIUM, _B._require_browser


@pytest.fixture()
def card_page(tmp_path):
    _require_browser()
    root = _all_present(tmp_path / "runs")
    out = tmp_path / "card"
    res = CliRunner().invoke(app, ["card", "--judge", J, "--from", str(root), "--out", str(out),
                                   "--ledger", str(root / "ledger.yaml")])
    assert res.exit_code == 0, res.output
    return out


def test_card_page_reads_at_desktop_and_phone_widths(card_page):
    from playwright.sync_api import sync_playwright

    html = card_page / "card.html"
    assert html.stat().st_size < 1_000_000
    card = json.loads((card_page / "card.json").read_text())
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        for name, width in (("desktop", 1280), ("phone", 390)):
            page = b.new_page(viewport={"width": width, "height": 900})
            page.goto(html.as_uri())
            first = page.locator("main > section").first
            assert first.get_attribute("class") == "verdict"
            assert first.inner_text().startswith(card["verdict"][0])
            assert page.locator("svg").count() >= 6     # plane, axes, CAP, a_imp, world × 1, loop
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            ids = page.eval_on_selector_all("section.card", "els => els.map(e => e.id)")
            assert ids == ["validity", "cap", "vp", "world", "loop", "checklist", "ledger", "provenance"]
            page.screenshot(path=str(card_page / f"card-{name}.png"), full_page=True)
            page.close()
        b.close()
    assert (card_page / "card-desktop.png").stat().st_size > 10_000
    assert (card_page / "card-phone.png").stat().st_size > 10_000
