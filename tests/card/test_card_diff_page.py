"""``card diff --html``: the comparison as a page — the two cards side by side, every shared quantity with
each card's own value and interval, B − A with its interval and its flag — beside the Markdown of
``--out``; written only where the command may write (never over a file it did not make)."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

from test_card import J, _all_present
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError


def two_cards(tmp_path: Path) -> tuple[Path, Path]:
    """Cards A and B of the fixture judge: B's run has R 0.45 [0.38, 0.52] where A's has 0.31 [0.25, 0.37]."""
    ra = _all_present(tmp_path / "runs-a")
    rb = _all_present(tmp_path / "runs-b")
    res = json.loads((rb / "validity" / "result.json").read_text())
    res["judges"][J].update(R=0.45, R_ci=[0.38, 0.52])
    (rb / "validity" / "result.json").write_text(json.dumps(res))
    r = CliRunner()
    for root, name in ((ra, "ca"), (rb, "cb")):
        got = r.invoke(app, ["card", "--judge", J, "--from", str(root), "--out", str(tmp_path / name)])
        assert got.exit_code == 0, got.output
    return tmp_path / "ca", tmp_path / "cb"


def _text(html: str) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def test_card_diff_writes_the_page_and_its_markdown(tmp_path):
    ca, cb = two_cards(tmp_path)
    page, md = tmp_path / "diff.html", tmp_path / "diff.md"
    res = CliRunner().invoke(app, ["card", "diff", str(ca), str(cb), "--html", str(page), "--out", str(md)])
    assert res.exit_code == 0, res.output
    assert md.read_text() in res.output
    html = page.read_text()
    sides = re.findall(r'<section class="side" aria-label="card (A|B)">(.*?)</section>', html, re.S)
    assert [t for t, _ in sides] == ["A", "B"]
    assert "At matched invariance" in _text(sides[0][1]) and "R = 0.31 [0.25, 0.37]" in _text(sides[0][1])
    assert "R = 0.45 [0.38, 0.52]" in _text(sides[1][1])
    # the row: each card's own value and interval, B − A and the interval the diff computed, its flag
    # (half-width √(0.06² + 0.07²) = 0.092: the stored-interval reading, as the Markdown prints it)
    row = re.search(r"<tr class=\"changed\"><td class=\"q\">validity\.R</td>(.*?)</tr>", html, re.S)
    assert row, "validity.R is not flagged"
    cells = [_text(c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]
    # (the page rounds each number to what its interval supports, as the card does)
    assert cells[:5] == ["0.31 [0.25, 0.37]", "0.45 [0.38, 0.52]", "+0.14", "[+0.05, +0.23]", "changed"]
    assert cells[5].startswith("unpaired (stored intervals)")
    assert "| validity.R | 0.310 | 0.450 | +0.140 | [+0.048, +0.232] | **changed** |" in md.read_text()
    # every other quantity is the same run's: compared, not flagged
    summary = re.search(r"(\d+) of (\d+) compared quantities changed", html)
    assert summary and summary.group(1) == "1" and int(summary.group(2)) > 10
    assert html.count('<tr class="same">') == int(summary.group(2)) - 1


def test_card_diff_page_never_writes_over_a_file_it_did_not_make(tmp_path):
    ca, cb = two_cards(tmp_path)
    mine = tmp_path / "notes.html"
    mine.write_text("my notes")
    r = CliRunner()
    res = r.invoke(app, ["card", "diff", str(ca), str(cb), "--html", str(mine)])
    # the CLI: one line naming the file, exit 2
    assert isinstance(res.exception, InputError) and res.exception.field == "--html"
    assert "refusing to write over it" in str(res.exception) and mine.read_text() == "my notes"
    same = r.invoke(app, ["card", "diff", str(ca), str(cb), "--html", str(tmp_path / "x"), "--out",
                          str(tmp_path / "x")])
    assert isinstance(same.exception, InputError) and not (tmp_path / "x").exists()
    page = tmp_path / "page.html"
    for _ in range(2):       # its own page, written again
        assert r.invoke(app, ["card", "diff", str(ca), str(cb), "--html", str(page)]).exit_code == 0
    assert "Card comparison" in page.read_text()
