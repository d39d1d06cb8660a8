"""What several verb groups share: building judges from specs and running them through the store."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgeaudit.errors import InputError
from judgeaudit.judges import Judge, make_judge
from judgeaudit.records import JudgeRequest, verdicts_frame
from judgeaudit.runtime.executor import RetryPolicy, run
from judgeaudit.runtime.store import CallStore


def build_judges(specs: list[str | dict], *, api_base: str | None = None) -> list[Judge]:
    """One judge per spec; a replay file holding several judges becomes one judge per judge id.

    A spec is a string (``local``) or a mapping with ``spec`` and backend options
    (``{"spec": "api:openai/gpt-4o-mini", "family": "openai", "temperature": 0}``).
    """
    from judgeaudit.judges.replay import replay_judges

    judges: list[Judge] = []
    for spec in specs:
        if isinstance(spec, dict):
            opts = {k: v for k, v in spec.items() if k != "spec"}
            opts.setdefault("api_base", api_base)
            judges.append(make_judge(spec["spec"], **opts))
            continue
        if spec.startswith("replay:") and "judge=" not in spec:
            judges += replay_judges(spec.removeprefix("replay:"))  # one read of the file for all its judges
            continue
        judges.append(make_judge(spec, api_base=api_base))
    seen: set[str] = set()
    for j in judges:
        if j.id in seen:
            raise InputError(f"judge id {j.id!r} given twice", field="judge")
        seen.add(j.id)
    return judges


def judge_all(judges: list[Judge], requests: list[JudgeRequest], *, store_path: Path,
              concurrency: int | None = None, policy: RetryPolicy | None = None,
              progress: bool = True) -> pd.DataFrame:
    """Run every judge on every request it can answer (``Judge.can_answer``) through one call store;
    the verdict table of all of them."""
    frames = []
    with CallStore(store_path) as store:
        for j in judges:
            verdicts = run(j, [r for r in requests if j.can_answer(r)], store=store, concurrency=concurrency,
                           policy=policy, progress=progress)
            frames.append(verdicts_frame(verdicts))
    return pd.concat(frames, ignore_index=True) if frames else verdicts_frame([])
