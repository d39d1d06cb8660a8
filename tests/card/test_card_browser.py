"""card.html and card diff's page in headless Chromium (Debian's ``chromium`` driven by Playwright) at
desktop and phone widths: one page under 1 MB, the judge's findings first, the charts drawn, nothing
wider than the screen and nothing clipped, the (S, R) plane large enough to read with its labels clear of
the judge's point and of each other. Screenshots are left in the test's folder (``card-desktop.png``,
``card-phone.png``, ``diff-desktop.png``, ``diff-phone.png``).

Needs ``apt-get install -y chromium`` and ``pip install playwright==1.65.2``; without them these tests
fail with a clear message when ``CI=true`` and skip otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chromium import require_browser
from test_card import J, all_present_card
from typer.testing import CliRunner

from judgeaudit.cli import app

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def card_page(tmp_path_factory):
    require_browser()
    return all_present_card(tmp_path_factory.mktemp("card"))


def test_card_page_reads_at_desktop_and_phone_widths(card_page, file_pages):
    html = card_page / "card.html"
    assert html.stat().st_size < 1_000_000
    card = json.loads((card_page / "card.json").read_text())
    for name, width in (("desktop", 1280), ("phone", 390)):
        page = file_pages.open(html, width)
        first = page.locator("main > section").first
        assert first.get_attribute("class") == "verdict"
        assert card["verdict"][0] in first.inner_text()
        assert page.locator("svg").count() >= 6     # plane, axes, CAP, a_imp, world × 1, loop
        _layout_ok(page, width)
        ids = page.eval_on_selector_all("section.card", "els => els.map(e => e.id)")
        assert ids == ["validity", "cap", "vp", "world", "loop", "checklist", "ledger", "provenance"]
        page.screenshot(path=str(card_page / f"card-{name}.png"), full_page=True)
        page.close()
    assert (card_page / "card-desktop.png").stat().st_size > 10_000
    assert (card_page / "card-phone.png").stat().st_size > 10_000


WIDTHS = (("desktop", 1280), ("phone", 390))


def _boxes(page, selector: str) -> list[dict]:
    return page.eval_on_selector_all(selector, "els => els.map(e => { const r = e.getBoundingClientRect(); "
                                               "return {t: e.textContent, x0: r.left, x1: r.right, y0: r.top, "
                                               "y1: r.bottom}; })")


def _overlap(a: dict, b: dict) -> bool:
    return a["x0"] < b["x1"] and b["x0"] < a["x1"] and a["y0"] < b["y1"] and b["y0"] < a["y1"]


def _layout_ok(page, width: int) -> None:
    """Nothing wider than the screen, nothing cut by its box, no chart text outside its drawing, no crushed
    chart (``tests/pagelayout.py``, the checker every page's browser test uses)."""
    from pagelayout import layout_problems

    assert page.evaluate("document.documentElement.scrollWidth") <= width
    problems = layout_problems(page)
    assert problems == [], f"at {width}px:\n" + "\n".join(problems)


def _corner_card(tmp_path: Path) -> Path:
    """The fixture judge at (S, R) = (0.99, 0.02), beside the (1, 0) corner, with the floor at 0.95."""
    from test_card import _validity, _write

    d = _validity()
    d["s_floor"] = 0.95
    d["judges"][J].update(S=0.99, S_ci=[0.97, 1.0], R=0.02, R_ci=[0.0, 0.05])
    _write(tmp_path / "corner-runs" / "validity", d)
    res = CliRunner().invoke(app, ["card", "--judge", J, "--from", str(tmp_path / "corner-runs"), "--out",
                                   str(tmp_path / "corner")])
    assert res.exit_code == 0, res.output
    return tmp_path / "corner"


def test_the_plane_is_readable_and_its_labels_clear_the_point(card_page, file_pages, tmp_path):
    pages = [card_page / "card.html", _corner_card(tmp_path) / "card.html"]
    for html in pages:
        for name, width in WIDTHS:
            page = file_pages.open(html, width)
            _layout_ok(page, width)
            plane = _boxes(page, "svg.plane")
            assert len(plane) == 1
            # large enough to read: 360 px wide on a desktop, the screen's width less its margins on a phone
            assert plane[0]["x1"] - plane[0]["x0"] >= min(360, width - 48), (html, width, plane)
            labels = _boxes(page, "svg.plane text")
            points = _boxes(page, "svg.plane circle.point")
            assert len(points) == 1 and len(labels) >= 11
            for lab in labels:
                assert not _overlap(lab, points[0]), (html.parent.name, width, lab["t"])
            for i, la in enumerate(labels):
                for lb in labels[i + 1:]:
                    assert not _overlap(la, lb), (html.parent.name, width, la["t"], lb["t"])
            page.close()


def test_card_diff_page_reads_at_desktop_and_phone_widths(file_pages, tmp_path):
    from test_card_diff_page import two_cards

    require_browser()
    ca, cb = two_cards(tmp_path)
    html = tmp_path / "diff.html"
    res = CliRunner().invoke(app, ["card", "diff", str(ca), str(cb), "--html", str(html)])
    assert res.exit_code == 0, res.output
    assert html.stat().st_size < 1_000_000
    for name, width in WIDTHS:
        page = file_pages.open(html, width)
        _layout_ok(page, width)
        sides = _boxes(page, "section.side")
        assert len(sides) == 2
        if width >= 1000:       # side by side on a desktop, one above the other on a phone
            assert abs(sides[0]["y0"] - sides[1]["y0"]) < 1 and sides[0]["x1"] <= sides[1]["x0"]
        else:
            assert sides[0]["y1"] <= sides[1]["y0"]
        rows = page.locator("#differences tbody tr")
        assert rows.count() > 10
        flagged = page.locator("#differences tbody tr.changed")
        assert flagged.count() == 1 and "validity.R" in flagged.inner_text()
        # each row's cells stay inside the row (nothing cut off on the phone's stacked rows)
        cells = page.evaluate("""() => [...document.querySelectorAll('#differences tbody tr')].flatMap(tr => {
            const r = tr.getBoundingClientRect();
            return [...tr.children].filter(td => { const c = td.getBoundingClientRect();
                return c.right > r.right + 0.5 || c.left < r.left - 0.5; }).map(td => td.textContent); })""")
        assert cells == []
        page.screenshot(path=str(tmp_path / f"diff-{name}.png"), full_page=True)
        page.close()
    assert (tmp_path / "diff-desktop.png").stat().st_size > 10_000


def test_a_compare_page_with_long_unbroken_quantity_names_fits_both_widths(file_pages, tmp_path):
    """Label sets named without a space (a data set's path and slice) make quantity names longer than a
    phone's width and, in a table, than a desktop's: the names wrap inside their cell."""
    import json

    from test_card_diff_page import two_cards

    require_browser()
    ca, cb = two_cards(tmp_path)
    for c in (ca, cb):
        card = json.loads((c / "card.json").read_text())
        for r in card["sections"]["vp"]["rows"]:
            r["set"] = "judgebench-format_fixture:fixture-writer-1/" + "slice_of_the_public_copy_" * 3 + r["set"]
        (c / "card.json").write_text(json.dumps(card))
    html = tmp_path / "diff.html"
    res = CliRunner().invoke(app, ["card", "diff", str(ca), str(cb), "--html", str(html)])
    assert res.exit_code == 0, res.output
    assert "slice_of_the_public_copy_" in html.read_text()
    for _, width in WIDTHS:
        page = file_pages.open(html, width)
        _layout_ok(page, width)
        page.close()
