"""The quick demo's slices, its per-step estimate and measured time, and the per-kind estimate (no model calls)."""

from __future__ import annotations

import json
from collections import Counter

from judgeaudit.demo import FULL, SLICES, Step, probe_subset, run_step, steps_section
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.runtime.estimate import estimate


def test_validity_slice_keeps_one_base_item_of_8_groups_two_per_domain_with_all_their_edits(tmp_path):
    rows = [json.loads(x) for x in
            probe_subset(tmp_path, SLICES.bases_per_group, SLICES.groups).read_text().splitlines()]
    groups = {r["group"]: r["domain"] for r in rows}
    assert len(groups) == 8 and set(Counter(groups.values()).values()) == {2}
    assert sorted(groups) == ["econ-d01", "econ-d02", "geo-d01", "geo-d02", "med-d01", "med-d02",
                              "ml-d01", "ml-d02"]
    assert len({r["base_id"] for r in rows}) == 8
    assert len(rows) == 8 * 12 and len({r["slot"] for r in rows}) == 12


def test_every_group_is_kept_when_no_group_count_is_given(tmp_path):
    rows = [json.loads(x) for x in probe_subset(tmp_path, 1).read_text().splitlines()]
    assert len({r["group"] for r in rows}) == 24 and len(rows) == 24 * 12


def test_the_cut_is_stated_beside_the_full_sizes():
    text = SLICES.describe(SLICES.bootstrap)
    for part in ("8 of the bundled probe set's 24 groups", "2 regrades", f"{FULL.regrade} regrades",
                 "16 of the HaluEval QA slice's 40 rows", "first 1 IFEval item(s)", "at most 32 tokens",
                 "500 bootstrap resamples (full: 2000)", "judgeaudit demo --full"):
        assert part in text, part
    assert "Intervals from 20 bootstrap" in SLICES.describe(20)   # --bootstrap given: the count used


def test_a_step_row_has_its_estimate_before_and_its_calls_measured_after(tmp_path):
    from judgeaudit.runtime.executor import judge_all

    judge = make_judge("python:pyjudge_callables:grade")     # a stored judge with no documented rate
    store = tmp_path / "calls.sqlite"
    reqs: list[JudgeRequest] = []

    def step(n: int) -> Step:
        reqs[:] = [JudgeRequest(request_id=f"r{i}", text=f"text {i}") for i in range(n)]
        return Step("validity", [judge], lambda: reqs,
                    lambda: judge_all([judge], reqs, store_path=store, progress=False, concurrency=1) is None or [])

    sections, row = run_step(step(5), store)
    assert sections == []
    assert (row["calls"], row["stored"], row["made"]) == (5, 0, 5)
    assert row["estimate_s"] is None and row["ratio"] is None and "unknown" in row["basis"]
    assert row["judge_s"] >= 0.0 and row["wall_s"] >= row["judge_s"]   # one call at a time: part of the step's time
    _, again = run_step(step(5), store)              # a rerun: every call in the store, none made
    assert (again["calls"], again["stored"], again["made"]) == (0, 5, 0) and again["estimate_s"] == 0.0
    _, more = run_step(step(8), store)               # 3 new calls, rated by the 5 stored ones
    assert (more["calls"], more["stored"], more["made"]) == (3, 5, 3)
    assert "measured on 5 stored calls" in more["basis"]
    html = steps_section([row, again, more]).body
    assert html.count("<td>validity</td>") == 3 and "estimate / measured" in html and "—" in html


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


def test_the_whole_demo_is_estimated_before_it_starts(tmp_path):
    """The whole estimate is the sum of the model steps' estimates made before any step runs (each as the step
    prints it), unknown when one step's is; the line says what it leaves out."""
    from judgeaudit.demo import estimate_step, estimate_whole, whole_line
    from judgeaudit.runtime.executor import judge_all

    judge = make_judge("python:pyjudge_callables:grade")
    store = tmp_path / "calls.sqlite"
    first = [JudgeRequest(request_id=f"r{i}", text=f"text {i}") for i in range(5)]
    judge_all([judge], first, store_path=store, progress=False, concurrency=1)   # 5 stored calls rate the rest
    more = first + [JudgeRequest(request_id=f"m{i}", text=f"more {i}") for i in range(4)]
    other = first + [JudgeRequest(request_id=f"o{i}", text=f"other {i}") for i in range(3)]
    steps = [Step("validity", [judge], lambda: more, lambda: []), Step("loop", [judge], lambda: other, lambda: [])]
    whole = estimate_whole(steps, store)
    each = [estimate_step(s, store) for s in steps]
    assert (whole["calls"], whole["stored"]) == (7, 10)
    assert whole["estimate_s"] == sum(r["estimate_s"] for r in each) and whole["estimate_s"] is not None
    assert whole["steps"] == {"validity": each[0]["estimate_s"], "loop": each[1]["estimate_s"]}
    line = whole_line(whole)
    assert line.startswith("demo: 7 calls of the embedded judge to make (10 stored), estimate ~")
    assert "validity ~" in line and "loop ~" in line and "analyses, pages and card come on top" in line
    fresh = tmp_path / "fresh.sqlite"                  # nothing stored and no documented rate: unknown
    unknown = estimate_whole(steps, fresh)
    assert unknown["estimate_s"] is None and "estimate unknown (validity unknown, loop unknown)" in whole_line(unknown)


def test_the_world_step_shows_progress(tmp_path, monkeypatch):
    """The demo's world step runs its judge calls with progress on, as its other model steps do."""
    import pytest

    import judgeaudit.world.run as world_run
    from judgeaudit.demo import SLICES, _world_step

    seen = {}

    class Called(Exception):
        pass

    def judge_world(*args, **kw):   # where the world run's judge calls are made: the options they are made with
        seen.update(kw)
        raise Called

    monkeypatch.setattr(world_run, "judge_world", judge_world)
    with pytest.raises(Called):
        _world_step(tmp_path, 10, SLICES).run()
    assert seen["progress"] is True
