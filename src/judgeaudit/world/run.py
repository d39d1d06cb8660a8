"""The world runs: (items × arms × votes) through each judge and the call store.

``judge_world`` builds the requests of every arm (``world.requests``) and runs the judges
(``runtime.executor.judge_all``: store, progress, failures as verdict rows); the statistics over the
verdict table they return are the pure functions of ``judgeaudit.analyses.world`` (``analyse``, the
factorial's ``factorial_table``), named here too for the callers that run and analyse in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from judgeaudit.analyses.world.analysis import (  # noqa: F401 - the world statistics, named where runs are made
    SCORED_HOW,
    UNIT_OF_FORM,
    Analysis,
    analyse,
    jsonable,
    matcher_queries,
    provenance,
)
from judgeaudit.analyses.world.factorial import (  # noqa: F401
    FACTORS,
    factorial_arms,
    factorial_table,
    parse_factors,
)
from judgeaudit.analyses.world.paired import STRATUM, paired_rows, stratum_mcnemar  # noqa: F401
from judgeaudit.analyses.world.rates import BOOTSTRAP_UNIT, rates, recall_by_kind, resampled  # noqa: F401
from judgeaudit.records import WorldItem
from judgeaudit.world.arms import ArmContext
from judgeaudit.world.requests import build_requests, taxonomy_of

if TYPE_CHECKING:
    from judgeaudit.runtime.context import RunContext


def context_for(items: list[WorldItem], seed: int, encoder=None, top_k: int = 5) -> ArmContext:
    return ArmContext(pool=tuple(items), seed=seed, encoder=encoder, top_k=top_k, taxonomy=taxonomy_of(items))


def judge_world(items: list[WorldItem], judges: list, arms: Sequence[str], *, form: str, votes: int,
                store_path, seed: int = 0, encoder=None, top_k: int = 5, concurrency: int | None = None,
                progress: bool = True, context: RunContext | None = None) -> pd.DataFrame:
    """The verdict table of every judge on every (item, arm, vote), its calls made in ``context`` (a command's
    ``RunContext``; None: the defaults)."""
    from judgeaudit.runtime.executor import judge_all

    requests = build_requests(items, list(arms), context_for(items, seed, encoder, top_k), form=form, votes=votes)
    return judge_all(judges, requests, store_path=store_path, concurrency=concurrency, progress=progress,
                     context=context)
