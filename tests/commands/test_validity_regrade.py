"""The regrade path of a validity run: a re-asked request is a genuinely independent call.

The local judge's forward pass is replaced by a stub whose output drifts from one pass to the
next, so no model is loaded: a regrade served from an in-process cache reproduces the first grade
whatever the instrument does, and regrade agreement could never fall below 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from judgeaudit.analyses.validity import validity_profile
from judgeaudit.runtime.executor import judge_all
from judgeaudit.probes.design import regrade_requests
from judgeaudit.judges import local, make_judge
from judgeaudit.probes.design import graded_requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analyses"))
from simulate_validity import make_probes  # noqa: E402


def _drifting_passes(monkeypatch):
    """Every forward pass puts its mass on a different digit: pass k peaks on grade 1 + k mod 9."""
    passes: list[bool] = []

    def logits(self, prompt, fresh=False):
        out = np.zeros(9)
        out[len(passes) % 9] = 20.0
        passes.append(fresh)
        return out

    monkeypatch.setattr(local, "_DIST_CACHE", {})
    monkeypatch.setattr(local.LocalJudge, "_next_token_logits", logits)
    return passes


def test_regrade_requests_are_marked_and_keyed_apart():
    probes = make_probes(3)
    reqs = graded_requests(probes)
    again = regrade_requests(reqs, 4)
    assert len(again) == 4 and all(r.epoch == 1 and r.meta["regrade"] for r in again)
    judge = make_judge("local")
    first = {r.request_id: judge.key(r) for r in reqs}
    assert all(judge.key(r) != first[r.request_id] for r in again)


def test_a_judge_whose_second_grading_differs_has_regrade_below_one(tmp_path, monkeypatch):
    passes = _drifting_passes(monkeypatch)
    probes = make_probes(4)
    reqs = graded_requests(probes)
    again = regrade_requests(reqs, 6)
    judge = make_judge("local")
    judge._digit_ids = list(range(9))          # no tokenizer needed: the stub's logits are the digits
    v = judge_all([judge], reqs + again, store_path=tmp_path / "calls.sqlite", progress=False)
    prompts = {judge.render(r) for r in reqs}
    assert passes.count(False) == len(prompts)            # first grades: one pass per distinct prompt
    assert passes.count(True) == len(again)               # each regrade: its own pass, from scratch
    p = validity_profile(probes, v, n_boot=0, n_perm=0)["local"]
    assert p["n_regraded"] == 6
    assert p["regrade_agreement"] < 1.0
    assert p["regrade_binary_agreement"] is not None
