"""The reply-format tables: what judges write, and the parse each reply must give.

``replies/graded.yaml`` and ``replies/pairwise.yaml`` hold at least 150 replies each, in the framings
judges use (MT-Bench ``[[7]]`` and ``[[A]]``/``[[B]]``/``[[C]]``, Arena-Hard ``[[A>B]]``, JSON, labels with
full-width colons and markdown) and the ambiguous ones that must be refused (another scale, a range, a
decimal on an integer scale, both letters, two different bracketed ratings). Each row names its
expected value, or ``refuse`` with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from judgeaudit.judges import elicit
from judgeaudit.judges.scale import Scale

HERE = Path(__file__).parent / "replies"
GRADED = yaml.safe_load((HERE / "graded.yaml").read_text())
PAIRWISE = yaml.safe_load((HERE / "pairwise.yaml").read_text())


def scale_of(row: dict) -> Scale:
    s = row.get("scale")
    if s is None:
        return elicit.OVERREACH_SCALE
    if s == "pass_fail":
        return Scale.passfail()
    lo, hi = s.split("-")
    return Scale(min=int(lo), max=int(hi), higher="better")


def test_the_tables_are_large_and_mixed():
    for rows in (GRADED, PAIRWISE):
        assert len(rows) >= 150
        assert sum("refuse" in r for r in rows) >= 30
        assert len({(r["reply"], r.get("scale")) for r in rows}) == len(rows), "duplicate replies"
    assert any(r.get("scale") == "pass_fail" for r in GRADED)
    assert {r.get("strength") for r in PAIRWISE} >= {0, 1, 2}


@pytest.mark.parametrize("row", GRADED, ids=lambda r: repr(r["reply"])[:40])
def test_graded_reply(row):
    r = elicit.parse_graded(row["reply"], scale_of(row))
    if "refuse" in row:
        assert not r.ok and r.error, (row, r)
    else:
        assert r.ok and r.score == float(row["expect"]), (row, r)
        assert r.score_at is not None
        if not scale_of(row).pass_fail:
            assert row["reply"][r.score_at:].startswith(str(row["expect"]))


@pytest.mark.parametrize("row", PAIRWISE, ids=lambda r: repr(r["reply"])[:40])
def test_pairwise_reply(row):
    r = elicit.parse_pairwise(row["reply"])
    if "refuse" in row:
        assert not r.ok and r.error, (row, r)
    else:
        assert r.ok and r.choice == row["expect"], (row, r)
        assert r.strength == row.get("strength"), (row, r)


def parse_rate(rows, parse) -> tuple[int, int]:
    agree = 0
    for row in rows:
        r = parse(row)
        agree += (not r.ok) if "refuse" in row else (r.ok and (r.score, r.choice)[r.choice is not None]
                                                     in (row["expect"], float(row["expect"]) if isinstance(row["expect"], int) else row["expect"]))
    return agree, len(rows)


def test_parse_rates_are_complete():
    """Every row as the table says (the strict parsers this replaced read 99/154 graded and 67/153
    pairwise rows as the table says)."""
    g = parse_rate(GRADED, lambda row: elicit.parse_graded(row["reply"], scale_of(row)))
    p = parse_rate(PAIRWISE, lambda row: elicit.parse_pairwise(row["reply"]))
    assert g == (len(GRADED), len(GRADED)) and p == (len(PAIRWISE), len(PAIRWISE))
