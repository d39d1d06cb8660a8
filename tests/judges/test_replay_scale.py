"""A replay file graded on another scale: ``replay:FILE?scale=1,10`` (``&higher=better``, the default, or
``worse``). The scores are checked against that scale (one error line naming the file, line and field), raw
replies are parsed on it, and the validity analysis reads the frontier on it (``analyses.grade_scale``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from judgeaudit.commands.validity import run_validity
from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.probes.design import graded_requests
from judgeaudit.probes.io import read_probes
from judgeaudit.probes.taxonomy import SLOT_BY_NAME
from judgeaudit.records import JudgeRequest, probes_frame

def quality_ratings(probes: Path, tmp_path: Path) -> Path:
    """A 1–10 quality judge (higher = better): 8 for an original or a construct-preserving edit, 2 for a
    construct-changing one (the edits a valid judge must move on)."""
    df = probes_frame(read_probes(probes))
    changing = {r.probe_id for r in df.itertuples() if SLOT_BY_NAME[r.slot].axis != "control"}
    rows = [{"request_id": r.request_id, "score": 2 if r.request_id in changing else 8}
            for r in graded_requests(df)]
    path = tmp_path / "ratings.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _profile(probes, spec, out):
    run_validity(str(probes), [spec], out=out, n_boot=50, n_regrade=0)
    return json.loads((out / "result.json").read_text())["judges"][spec]


def test_a_1_to_10_replay_is_read_on_its_scale_through_validity_run(small_probes, tmp_path):
    probes = small_probes
    ratings = quality_ratings(probes, tmp_path)
    j = _profile(probes, f"replay:{ratings}?scale=1,10", tmp_path / "declared")
    assert j["scale"]["label"] == "1-10" and j["scale"]["higher"] == "better" and j["scale"]["reflected"]
    # reflected grades 11 - 8 = 3 and 11 - 2 = 9: every construct-changing edit flagged at τ = 9, none else
    assert (j["S"], j["R"], j["R_plus"], j["wrong_way_rate"], j["tau"]) == (1.0, 1.0, 1.0, 0.0, 9.0)
    assert [t for _, _, t in j["frontier"]] == [3.0, 9.0, 10.0]     # the thresholds the reflected 1–10 attains
    assert j["scale"]["operating_points"] == 1 and j["parse_failures"] == 0 and j["interpretable"]
    # read on the judges' 1–9 (no scale= given), the same grades run the wrong way: every move is toward "better"
    plain = _profile(probes, f"replay:{ratings}", tmp_path / "plain")
    assert plain["scale"]["label"] == "1-9" and not plain["scale"]["reflected"]
    assert (plain["R_plus"], plain["wrong_way_rate"]) == (0.0, 1.0)
    # higher=worse: the file's grades read as they are (a higher grade more of the defect), as on the 1–9 scale
    worse = _profile(probes, f"replay:{ratings}?scale=1,10&higher=worse", tmp_path / "worse")
    assert worse["scale"]["label"] == "1-10" and not worse["scale"]["reflected"]
    assert (worse["R_plus"], worse["wrong_way_rate"]) == (0.0, 1.0)


def test_a_score_outside_the_declared_scale_is_one_line_naming_file_line_and_field(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text('{"request_id": "a", "score": 10}\n')
    assert make_judge(f"replay:{f}?scale=1,10").scale.label() == "1-10"
    f.write_text('{"request_id": "a", "score": 10}\n{"request_id": "b", "score": 11}\n')
    with pytest.raises(InputError, match=r"r.jsonl:2: field 'score': score 11.0 is outside the declared 1-10 scale"):
        make_judge(f"replay:{f}?scale=1,10")
    with pytest.raises(InputError, match=r"r.jsonl:1: field 'score': score 10.0 is outside the judges' 1–9 scale"):
        make_judge(f"replay:{f}")
    for spec, field in ((f"replay:{f}?scale=1.5,10", "scale"), (f"replay:{f}?scale=10,1", "scale"),
                        (f"replay:{f}?scale=1,10&higher=up", "higher"), (f"replay:{f}?higher=better", "higher")):
        with pytest.raises(InputError, match=rf"r.jsonl: field '{field}'"):
            make_judge(spec)


def test_raw_replies_are_parsed_on_the_declared_scale(tmp_path):
    f = tmp_path / "raw.jsonl"
    f.write_text('{"request_id": "a", "raw": "Rating: [[10]]"}\n{"request_id": "b", "raw": "Rating: [[11]]"}\n')
    reqs = [JudgeRequest(request_id=i, text="t") for i in ("a", "b")]
    on_10 = asyncio.run(make_judge(f"replay:{f}?scale=1,10").judge(reqs))
    assert [(v.parse_ok, v.score) for v in on_10] == [(True, 10.0), (False, None)]
    on_9 = asyncio.run(make_judge(f"replay:{f}").judge(reqs))
    assert [v.parse_ok for v in on_9] == [False, False]
    pf = tmp_path / "pf.jsonl"
    pf.write_text('{"request_id": "a", "score": 1}\n{"request_id": "b", "score": 0}\n')
    j = make_judge(f"replay:{pf}?scale=pass_fail")
    assert j.scale.pass_fail and [v.score for v in asyncio.run(j.judge(reqs))] == [1.0, 0.0]
