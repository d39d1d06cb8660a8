"""The defect-form reply table: what judges write for a defect list, and the parse each reply must give.

``replies/defects.yaml`` holds judgeaudit's JSON defect list (``elicit.parse_defects``: a list of
``{"span", "reason", "citation"?}``) and the world defects form (``{"defects": [{"quote", ...}]}``,
``world.parse``) in the framings judges use: fenced ```json blocks, prose before and after, markdown,
an empty list meaning "no defects", trailing commas, single quotes, keys in other cases, a list under
another key, several JSON values, citations as numbers. Refused: truncated JSON, lists that disagree,
a defect without a quote or a reason, prose with no list. Each row names its defects or ``refuse``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from judgeaudit.judges import elicit
from judgeaudit.records import JudgeRequest
from judgeaudit.world.parse import parse as world_parse

ROWS = yaml.safe_load((Path(__file__).parent / "replies" / "defects.yaml").read_text(encoding="utf-8"))
WORLD_REQUEST = JudgeRequest(request_id="w", form="defects", text="The drug lowers blood pressure in all adults.",
                             meta={"template": "world"})


def read(row: dict):
    if row.get("reader") == "world":
        return world_parse(WORLD_REQUEST, row["reply"])
    return elicit.parse_defects(row["reply"])


def as_rows(defects) -> list[dict]:
    return [{"span": d.span, "reason": d.reason, **({"citation": d.citation} if d.citation is not None else {})}
            for d in defects]


def as_expected(row: dict, r) -> bool:
    if "refuse" in row:
        return not r.ok
    return r.ok and as_rows(r.defects) == row["expect"]


def test_the_table_is_large_and_mixed():
    assert len(ROWS) >= 150
    assert sum("refuse" in r for r in ROWS) >= 40
    assert sum(r.get("reader") == "world" for r in ROWS) >= 40
    assert sum(r.get("expect") == [] for r in ROWS) >= 10
    assert len({(r["reply"], r.get("reader")) for r in ROWS}) == len(ROWS), "duplicate replies"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.get('reader', 'list')}:{r['reply'][:40]!r}")
def test_defect_reply(row):
    r = read(row)
    if "refuse" in row:
        assert not r.ok and r.error, (row, r)
    else:
        assert r.ok and as_rows(r.defects) == row["expect"], (row, r)
        if row.get("reader") == "world":
            assert r.label is bool(row["expect"])


def test_every_row_as_the_table_says():
    """(The first-bracket-to-last-bracket list reader and the first-object world reader this replaced read
    155/191 rows as the table says: 119/146 of the lists to read and 36/45 of the replies to refuse; 9 of
    those they read instead, e.g. a list followed by a loose defect object, of which they dropped the object.)"""
    assert sum(as_expected(row, read(row)) for row in ROWS) == len(ROWS)
