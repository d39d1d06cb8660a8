"""The graded requests a validity run sends (construct-validity.txt Remark 1, §4.1).

Per-item mode: the original of each base item and each edited text are graded independently on
the overreach scale; the verdict is cut by us later (``analyses.validity``). The original is
graded once per base item, whatever the number of its interventions.
"""

from __future__ import annotations

import pandas as pd

from judgeaudit.records import JudgeRequest


def graded_requests(probes_df: pd.DataFrame) -> list[JudgeRequest]:
    """One graded request per base original and one per edited text.

    The original's ``request_id`` is its ``base_id``; an edited text's is its ``probe_id``
    (the ids ``analyses.validity`` joins verdicts on). Order is deterministic: base items in
    order of first appearance, each base's original followed by its edits in table order.

    Args:
        probes_df: the probe table (``records.PROBE_COLUMNS``).

    Returns:
        The requests, ``form="graded"``, ``epoch=0``, with text, evidence and criterion set.
    """
    out: list[JudgeRequest] = []
    if probes_df.empty:
        return out
    for base_id, group in probes_df.groupby("base_id", sort=False):  # bases in order of first appearance
        rows = group.to_dict("records")
        first = rows[0]
        common = {"domain": first["domain"], "group": first["group"], "base_id": str(base_id)}
        out.append(JudgeRequest(request_id=str(base_id), form="graded", text=first["original"],
                                evidence=first["evidence"], criterion=first["criterion"],
                                meta={**common, "role": "original"}))
        for r in rows:
            out.append(JudgeRequest(request_id=str(r["probe_id"]), form="graded", text=r["edited"],
                                    evidence=r["evidence"], criterion=r["criterion"],
                                    meta={**common, "role": "edited", "slot": r["slot"]}))
    return out


def validity_requests(probes_df: pd.DataFrame, n_regrade: int) -> list[JudgeRequest]:
    """Every request of a validity run on ``probes_df``: the graded requests (``graded_requests``), then the
    ``n_regrade`` re-graded ones (``regrade_requests``). The one builder: the run, its cost estimate, the
    default run, the demo and ``requests export`` send exactly these."""
    requests = graded_requests(probes_df)
    return requests + regrade_requests(requests, n_regrade)


def regrade_requests(requests: list[JudgeRequest], n: int) -> list[JudgeRequest]:
    """A deterministic, evenly spaced sample of ``n`` requests, re-asked as epoch 1 (regrade agreement,
    App. D). Epoch 1 gives each its own call key, so the call store cannot answer it with the first
    grade, and ``meta["regrade"]`` tells a backend that keeps an in-process cache of results
    (the local judge's prompt cache) to make a fresh call."""
    if n <= 0 or not requests:
        return []
    step = max(1, len(requests) // n)
    return [r.model_copy(update={"epoch": 1, "meta": {**r.meta, "regrade": True}})
            for r in requests[::step][:n]]
