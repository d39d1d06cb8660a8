"""The quick demo's validity slice and the per-kind estimate (no model calls)."""

from __future__ import annotations

import json

from judgeaudit.demo import SLICES, probe_subset
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.runtime.estimate import estimate


def test_validity_slice_keeps_one_base_item_of_every_group_with_all_its_edits(tmp_path):
    rows = [json.loads(x) for x in probe_subset(tmp_path, SLICES.bases_per_group).read_text().splitlines()]
    assert len({r["group"] for r in rows}) == 24 and len({r["base_id"] for r in rows}) == 24
    assert len(rows) == 24 * 12 and len({r["slot"] for r in rows}) == 12


def test_estimate_uses_stored_calls_of_each_kind():
    judge = make_judge("reference:constant")
    todo = [JudgeRequest(request_id=f"r{i}", text="t") for i in range(10)]
    todo += [JudgeRequest(request_id=f"g{i}", text="t", epoch=1, meta={"regrade": True}) for i in range(2)]
    cached = {f"k{i}": Verdict(call_key=f"k{i}", request_id=f"s{i}", judge_id="x", latency_s=0.5, parse_ok=True)
              for i in range(5)}
    cached |= {f"f{i}": Verdict(call_key=f"f{i}", request_id=f"f{i}", judge_id="x", latency_s=4.0, parse_ok=True,
                                meta={"regrade": True}) for i in range(5)}
    e = estimate(judge, todo, cached=cached)
    assert e.seconds == 10 * 0.5 + 2 * 4.0
