"""Probe file reading (read_probes) and the graded request design (graded_requests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeaudit.errors import InputError
from judgeaudit.probes.design import graded_requests
from judgeaudit.probes.io import bundled_probes_path, read_probes
from judgeaudit.records import probes_frame


def _line(**over):
    base = {"probe_id": "b1-domain_extension", "base_id": "b1", "group": "doc1", "domain": "geoscience",
            "criterion": "Does the claim overreach its evidence?", "evidence": "In one basin, M reduced noise.",
            "original": "M may reduce noise in this basin.", "edited": "M may reduce noise in all basins.",
            "slot": "domain_extension"}
    base.update(over)
    return {k: v for k, v in base.items() if v is not None}


def _write(tmp_path: Path, rows, raw_lines=()) -> Path:
    p = tmp_path / "probes.jsonl"
    text = "".join(json.dumps(r) + "\n" for r in rows) + "".join(raw_lines)
    p.write_text(text, encoding="utf-8")
    return p


def _good_rows():
    return [
        _line(),
        _line(probe_id="b1-format_shift", slot="format_shift", edited="M may reduce noise (in this basin).",
              labels=["neither", "neither", "cannot_tell"], intended_direction="neither"),
        _line(probe_id="b2-hedging_removal", base_id="b2", group="doc1", original="X may rise.",
              edited="X rises.", slot="hedging_removal", intended_direction="edited"),
    ]


def test_reads_a_valid_file(tmp_path):
    probes = read_probes(_write(tmp_path, _good_rows()))
    assert [p.probe_id for p in probes] == ["b1-domain_extension", "b1-format_shift", "b2-hedging_removal"]
    assert probes[1].labels == ["neither", "neither", "cannot_tell"]
    assert probes[0].labels is None and probes[2].intended_direction == "edited"


@pytest.mark.parametrize("bad, line, field, words", [
    (_line(probe_id="b2-x", base_id="b2", slot="hedge_padding"), 3, "slot", "unknown slot"),
    (_line(), 3, "probe_id", "duplicate probe_id"),
    (_line(probe_id="b1-reordering", slot="reordering", original="M might reduce noise here."), 3, "original",
     "different original"),
    (_line(probe_id="b1-reordering", slot="reordering", evidence="Other evidence."), 3, "evidence",
     "different evidence"),
    (_line(probe_id="b1-reordering", slot="reordering", labels=["edited", "maybe"]), 3, "labels.1", "edited"),
    (_line(probe_id="b1-reordering", slot="reordering", intended_direction="edited"), 3, "intended_direction",
     "contradicts"),
    (_line(probe_id="b3-x", base_id="b3", slot="reordering", edited=None), 3, "edited", "required"),
    (_line(probe_id="b1", slot="reordering"), 3, "probe_id", "also a base_id"),
])
def test_bad_lines_raise_with_file_line_and_field(tmp_path, bad, line, field, words):
    rows = [_good_rows()[0], _good_rows()[1], bad]
    path = _write(tmp_path, rows)
    with pytest.raises(InputError) as e:
        read_probes(path)
    err = e.value
    assert err.path == str(path) and err.line == line and err.field == field
    assert words in str(err) and f"probes.jsonl:{line}" in str(err)


def test_malformed_json_and_empty_file(tmp_path):
    path = _write(tmp_path, _good_rows()[:1], raw_lines=["{not json\n"])
    with pytest.raises(InputError) as e:
        read_probes(path)
    assert e.value.line == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="no probes"):
        read_probes(empty)


def test_bundled_path_points_into_the_package():
    p = bundled_probes_path()
    assert p.parts[-3:] == ("probes", "data", "bundled.jsonl")
    if p.exists():  # written by the probe-set work; when present it must read cleanly
        probes = read_probes("bundled")
        assert len({x.base_id for x in probes}) >= 48 and len(probes) == 12 * len({x.base_id for x in probes})


def test_graded_requests_one_per_original_and_one_per_edit(tmp_path):
    probes = read_probes(_write(tmp_path, _good_rows()))
    reqs = graded_requests(probes_frame(probes))
    assert [r.request_id for r in reqs] == ["b1", "b1-domain_extension", "b1-format_shift", "b2",
                                            "b2-hedging_removal"]
    assert reqs[0].text == "M may reduce noise in this basin." and reqs[0].meta["role"] == "original"
    assert reqs[2].text == "M may reduce noise (in this basin)." and reqs[2].meta["slot"] == "format_shift"
    assert all(r.form == "graded" and r.epoch == 0 and r.evidence and r.criterion for r in reqs)
    assert graded_requests(probes_frame(probes)) == reqs  # deterministic
