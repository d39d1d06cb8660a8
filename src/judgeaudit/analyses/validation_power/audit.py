"""The audit of Definition 6 (construct-validity.txt; App. E): every member of the frozen family on
every label set in every requested input mode, with nulls, a_imp and its interval, a_hum and VP,
and transfer between sets."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.analyses.validation_power.ceiling import human_ceiling
from judgeaudit.analyses.validation_power.family import (
    CLASSIFIER_PARAMS,
    FAMILY,
    MEMBERS,
    NGRAM_PARAMS,
    PROVENANCE_MEMBER,
    _Designs,
    _Provenance,
    oof_predictions_many,
)
from judgeaudit.analyses.validation_power.modes import (
    Prepared,
    between_group_label_share,
    has_condition,
    is_paired_table,
    length_rules,
    prepare_item,
    prepare_paired,
)
from judgeaudit.analyses.validation_power.nulls import N_FOLDS, _broken, label_permutations, make_folds
from judgeaudit.analyses.validation_power.results import MemberScore, ModeResult, ValidationPowerResult
from judgeaudit.analyses.validation_power.scoring import _accuracy, a_imp_interval, pooled_kappa
from judgeaudit.analyses.validation_power.transfer import TransferScore, transfer_scores
from judgeaudit.errors import InputError
from judgeaudit.stats.resample import permutation_p


def one_blas_thread() -> Any:
    """BLAS held to one thread (a context manager), as every audit runs: the work is thousands of
    small logistic-regression fits and products, for which BLAS's threads only add contention
    (starting and spinning them costs many times the arithmetic of a product of this size)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def audit_prepared(prep: Prepared, *, set_name: str = "set", n_permutations: int = 30, seed: int = 0,
                   n_boot: int = 1000, ceiling: tuple[float, float, float] | None = None,
                   members: Sequence[str] | None = None, route: str = "fast") -> ModeResult:
    """Audit one prepared set in its mode: every member's pooled OOF κ (and accuracy), its
    within-group permutation null under the same folds, a_imp (the max over members) with a
    group-bootstrap interval of that max (``a_imp_interval``) and the null of that max, a_hum
    (``human_ceiling``) and VP (Def. 6; App. E).

    Args:
        prep: from ``prepare_item`` / ``prepare_paired``.
        n_permutations: label permutations per member for the null.
        seed: fixes KFold shuffling (when used), permutations and bootstraps.
        n_boot: bootstrap resamples of groups for the a_imp and a_hum intervals.
        ceiling: a user-supplied ``(a_hum, lo, hi)``; overrides the set's own annotators.
        members: restrict to these members (for tests/benchmarks); default all applicable.
        route: ``"fast"`` or ``"reference"`` (``family.ROUTES``): two computations of the same
            designs for the same solver; they give the same out-of-fold predictions.

    BLAS is held to one thread for the duration (``one_blas_thread``), as in ``audit_validation_power``.
    """
    with one_blas_thread():
        return _audit_prepared(prep, set_name=set_name, n_permutations=n_permutations, seed=seed, n_boot=n_boot,
                               ceiling=ceiling, members=members, route=route)


def _audit_prepared(prep: Prepared, *, set_name: str, n_permutations: int, seed: int, n_boot: int,
                    ceiling: tuple[float, float, float] | None, members: Sequence[str] | None,
                    route: str) -> ModeResult:
    """``audit_prepared`` on the BLAS setting in force."""
    y = prep.y
    labels = tuple(sorted(np.unique(y)))
    if len(labels) < 2:
        return ModeResult(set_name, prep.mode, False, reason=f"only one label value ({labels})")
    plan = make_folds(prep.groups, seed=seed)
    designs = _Designs(prep, plan, route=route)
    perms = label_permutations(prep, n_permutations, seed + 1)
    wanted = list(members) if members is not None else list(MEMBERS)
    unknown = [m for m in wanted if m not in MEMBERS]
    if unknown:
        raise InputError(f"unknown member(s) {unknown}; the frozen family is {list(MEMBERS)}", field="members")
    if PROVENANCE_MEMBER in wanted and not has_condition(prep):
        wanted.remove(PROVENANCE_MEMBER)
    scores: list[MemberScore] = []
    preds: dict[str, np.ndarray] = {}
    nulls: list[np.ndarray] = []
    for m in wanted:
        if m == PROVENANCE_MEMBER:
            prov = _Provenance(designs)
            pred, *null_preds = [prov.predict(yy) for yy in [y, *perms]]
        else:
            pred, *null_preds = oof_predictions_many(designs, m, [y, *perms])
        preds[m] = pred
        k_obs = pooled_kappa(y, pred)
        null = np.array([pooled_kappa(p, q) for p, q in zip(perms, null_preds, strict=True)])
        nulls.append(null)
        scores.append(MemberScore(
            name=m, kappa=k_obs, accuracy=_accuracy(y, pred),
            null_mean=float(null.mean()) if len(null) else float("nan"),
            null_p95=float(np.quantile(null, 0.95)) if len(null) else float("nan"),
            null_n=len(null), p_value=permutation_p(k_obs, null, "greater") if len(null) else float("nan"),
            broken_null=_broken(null)))
    best = max(scores, key=lambda s: s.kappa)
    # a_imp is the max over members: its interval and its null both carry that selection (every
    # member is refit on the same permutations, so the null of the max is the max per permutation)
    a_imp_ci = a_imp_interval(y, [preds[s.name] for s in scores], prep.groups, n_boot=n_boot, seed=seed + 2)
    max_null = np.max(np.vstack(nulls), axis=0) if len(perms) else np.empty(0)
    a_hum = a_hum_ci = src = detail = None
    if ceiling is not None:
        a_hum, a_hum_ci, src = float(ceiling[0]), (float(ceiling[1]), float(ceiling[2])), "user-supplied"
    elif prep.human is not None:
        detail = human_ceiling(prep.human, prep.groups, label_space=labels, n_boot=n_boot, seed=seed + 3)
        if detail.n_rows:
            a_hum, a_hum_ci = detail.kappa, detail.ci
            src = (f"κ of each annotator against the strict majority of the others, pooled over "
                   f"{detail.n_rows} held-out labels on {detail.n_items} items")
    vp = resolvable = None
    if a_hum is not None:
        vp = a_hum - best.kappa
        resolvable = bool(a_imp_ci[1] < a_hum_ci[0] or a_hum_ci[1] < a_imp_ci[0])
    rules = length_rules(prep) if prep.mode == "paired" else {}
    table = {"group": prep.groups.astype(str), "response" if prep.texts_b is None else "response A": prep.texts_a}
    if prep.texts_b is not None:
        table["response B"] = prep.texts_b
    predictions = pd.DataFrame({**table, "label": y.astype(str),
                                **{m: np.asarray(p).astype(str) for m, p in preds.items()}})
    return ModeResult(
        set_name=set_name, mode=prep.mode, applicable=True, n=prep.n,
        n_groups=int(len(np.unique(prep.groups))), folds=plan.to_dict(), label_space=labels,
        members=tuple(scores), a_imp=best.kappa, a_imp_member=best.name, a_imp_ci=a_imp_ci,
        a_imp_accuracy=best.accuracy, a_hum=a_hum, a_hum_ci=a_hum_ci, a_hum_source=src, a_hum_detail=detail,
        a_imp_null_mean=float(max_null.mean()) if len(max_null) else float("nan"),
        a_imp_null_p95=float(np.quantile(max_null, 0.95)) if len(max_null) else float("nan"),
        a_imp_null_n=len(max_null),
        a_imp_p_value=permutation_p(best.kappa, max_null, "greater") if len(max_null) else float("nan"), vp=vp,
        resolvable=resolvable, broken_harness=tuple(s.name for s in scores if s.broken_null),
        n_ties_dropped=prep.n_ties_dropped, side_seed=seed if prep.mode == "paired" else None,
        n_permutations=n_permutations,
        between_group_label_share=(between_group_label_share(y, prep.groups) if prep.mode == "item" else None),
        predictions=predictions, **rules)


def audit_validation_power(sets: Mapping[str, pd.DataFrame], **kw: Any) -> ValidationPowerResult:
    """Audit every label set in every requested input mode (Def. 6, App. E) and, optionally,
    transfer between sets. See ``_audit_validation_power`` for the arguments.

    BLAS is held to one thread for the duration (``one_blas_thread``).
    """
    from judgeaudit.analyses.validation_power import family

    try:
        with one_blas_thread():
            return _audit_validation_power(sets, **kw)
    finally:
        family.clear_caches()   # n-grams of words and the last set's counts: not needed past the audit


def _audit_set(name: str, df: pd.DataFrame, modes: Sequence[str], ceilings: Mapping[str, Any], *, seed: int,
               **kw: Any) -> tuple[list[ModeResult], dict[tuple[str, str], Prepared]]:
    """Every requested mode of one set: its results and its prepared tables (for transfer)."""
    results: list[ModeResult] = []
    prepared: dict[tuple[str, str], Prepared] = {}
    for mode in modes:
        if mode == "paired" and not is_paired_table(df):
            results.append(ModeResult(name, mode, False, reason="per-item labels, not comparisons"))
            continue
        prep = prepare_paired(df, seed=seed) if mode == "paired" else prepare_item(df)
        prepared[(name, mode)] = prep
        results.append(_audit_prepared(prep, set_name=name, seed=seed, ceiling=ceilings.get(mode), **kw))
    return results, prepared


def _limited(fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """``fn(*args, **kw)`` in a worker process, with BLAS held to one thread as in the parent.

    A worker lives on between jobs and audits, so after each job the n-gram caches are emptied and
    freed heap pages handed back to the system (``malloc_trim`` where the C library has it): a
    worker that keeps the pages of a large job looks like a leak to the process pool, which then
    replaces it."""
    import ctypes
    import ctypes.util
    import gc

    from judgeaudit.analyses.validation_power import family

    try:
        with one_blas_thread():
            return fn(*args, **kw)
    finally:
        family.clear_caches()
        gc.collect()
        libc = ctypes.util.find_library("c")
        trim = getattr(ctypes.CDLL(libc), "malloc_trim", None) if libc else None
        if trim is not None:
            trim(0)


def _transfer_chunk(sources: Sequence[tuple[str, Prepared]], targets: Sequence[tuple[str, Prepared]], *,
                    route: str, origins: Mapping[str, str | None] | None = None) -> list[TransferScore]:
    """Every source of one mode scored on every other set of that mode (``transfer_scores``;
    ``origins``: each set's declared label origin): target by target, so each target's features
    are computed once, and each source's members are fit once (the cache)."""
    cache: dict[Any, Any] = {}
    origins = origins or {}
    return [transfer_scores(source, target, source_name=sn, target_name=tn, cache=cache, route=route,
                            source_origin=origins.get(sn), target_origin=origins.get(tn))
            for tn, target in targets for sn, source in sources if sn != tn]


def _transfer_chunks(prepared: Mapping[tuple[str, str], Prepared],
                     n_chunks: int) -> list[tuple[list[tuple[str, Prepared]], list[tuple[str, Prepared]]]]:
    """Per mode, the sources dealt into ``n_chunks`` chunks of about equal rows (the largest
    first, each to the lightest chunk), each chunk with all the mode's sets as targets."""
    jobs = []
    for mode in dict.fromkeys(m for _, m in prepared):
        sets = [(name, prep) for (name, m), prep in prepared.items() if m == mode]
        chunks: list[list[tuple[str, Prepared]]] = [[] for _ in range(min(n_chunks, len(sets)))]
        for item in sorted(sets, key=lambda s: -s[1].n):
            min(chunks, key=lambda c: sum(p.n for _, p in c)).append(item)
        jobs.extend((chunk, sets) for chunk in chunks)
    return jobs


def _set_cost(job: tuple[Any, ...]) -> float:
    """A set-and-mode job's relative cost: its rows cubed (a fold's row-space factorisation grows as
    the cube of its rows; item mode on a paired table fits both sides of each comparison as rows)."""
    _, df, (mode,), _ = job
    return float(len(df) * (2 if mode == "item" and is_paired_table(df) else 1)) ** 3


def _run_jobs(fn: Callable[..., Any], jobs: Sequence[tuple[Any, ...]], kw: dict[str, Any], *, n_jobs: int,
              map_sets: Callable[..., list[Any]] | None, cost: Callable[[tuple[Any, ...]], float]) -> list[Any]:
    """``[fn(*job, **kw) for job in jobs]``: through ``map_sets``, in ``n_jobs`` worker processes
    (the costliest jobs first, so the last worker to finish is not handed the biggest; results
    are put back in job order), or here."""
    if map_sets is not None:
        return map_sets(_limited, [(fn, *job) for job in jobs], kw)
    if n_jobs > 1 and len(jobs) > 1:
        from sklearn.utils.parallel import Parallel, delayed

        order = sorted(range(len(jobs)), key=lambda i: -cost(jobs[i]))
        done = Parallel(n_jobs=n_jobs)(delayed(_limited)(fn, *jobs[i], **kw) for i in order)
        return [r for _, r in sorted(zip(order, done, strict=True), key=lambda t: t[0])]
    return [fn(*job, **kw) for job in jobs]


def _audit_validation_power(sets: Mapping[str, pd.DataFrame], *, modes: Sequence[str] = ("item", "paired"),
                           n_permutations: int = 30, seed: int = 0, n_boot: int = 1000,
                           ceilings: Mapping[tuple[str, str], tuple[float, float, float]] | None = None,
                           transfer: bool = True, set_meta: Mapping[str, dict[str, Any]] | None = None,
                           members: Sequence[str] | None = None, route: str = "fast",
                           n_jobs: int = 1, map_sets: Callable[..., list[Any]] | None = None) -> ValidationPowerResult:
    """Audit every label set in every requested input mode (Def. 6, App. E) and, optionally,
    transfer between sets.

    Args:
        sets: name → item table or paired table (see module docstring).
        modes: any of ``"item"``, ``"paired"``. An item table has no paired mode (recorded as
            not applicable).
        n_permutations: label permutations per member (the null; recorded).
        seed: side-order randomisation, KFold shuffling, permutations and bootstraps.
        n_boot: group-bootstrap resamples for the a_imp and a_hum intervals.
        ceilings: user-supplied human ceilings ``(set, mode) → (a_hum, lo, hi)``.
        transfer: also fit each member on one set and score it on every other (same mode), where
            the two label spaces share two categories (``transfer.admission``).
        set_meta: free-form per-set metadata carried into the result (label origin, trimming);
            ``label_origin`` also decides transfer admission.
        members: restrict the family (tests/benchmarks only); default the whole frozen family.
        route: ``"fast"`` (default) or ``"reference"``; the same out-of-fold predictions.
        n_jobs: worker processes for the (set, mode) audits and the transfer sources (results do
            not depend on it).
        map_sets: ``map_sets(fn, jobs, kwargs) -> [fn(*job, **kwargs) for job in jobs]`` run elsewhere (the Ray
            backend's ``map``, ``runtime.raybackend``) instead of ``n_jobs`` local processes; the same result.
    """
    for m in modes:
        if m not in ("item", "paired"):
            raise InputError(f"unknown mode {m!r} (use item, paired or both)", field="mode")
    ceilings = dict(ceilings or {})
    results: list[ModeResult] = []
    prepared: dict[tuple[str, str], Prepared] = {}
    kw = {"n_permutations": n_permutations, "seed": seed, "n_boot": n_boot, "members": members, "route": route}
    jobs = [(name, df, (m,), {m: ceilings.get((name, m))}) for name, df in sets.items() for m in modes]
    per_set = _run_jobs(_audit_set, jobs, kw, n_jobs=n_jobs, map_sets=map_sets, cost=_set_cost)
    for name_results, name_prepared in per_set:
        results.extend(name_results)
        prepared.update(name_prepared)
    transfers: list[TransferScore] = []
    if transfer:
        # the sources of each mode in chunks, one per worker; reported source by source
        chunks = _transfer_chunks(prepared, n_chunks=1 if map_sets is None and n_jobs == 1 else max(n_jobs, 2))
        origins = {name: (set_meta or {}).get(name, {}).get("label_origin") for name in sets}
        scored = _run_jobs(_transfer_chunk, chunks, {"route": route, "origins": origins}, n_jobs=n_jobs,
                           map_sets=map_sets,
                           cost=lambda job: sum(p.n for _, p in job[0]))
        by_pair = {(t.source, t.target, t.mode): t for scores in scored for t in scores}
        transfers = [by_pair[(sn, tn, sm)] for (sn, sm) in prepared for (tn, tm) in prepared
                     if sn != tn and sm == tm]
    config = {"family": list(FAMILY), "provenance_member": PROVENANCE_MEMBER, "modes": list(modes),
              "n_permutations": n_permutations, "seed": seed, "n_boot": n_boot, "n_folds": N_FOLDS,
              "classifier": f"LogisticRegression({', '.join(f'{k}={v!r}' for k, v in CLASSIFIER_PARAMS.items())})",
              "ngram": {k: (list(v) if isinstance(v, tuple) else v) for k, v in NGRAM_PARAMS.items()},
              "length_unit_for_rules": "characters",
              "a_imp_interval": "max over members of simultaneous group-bootstrap bands "
                                "(max-|t| over members per replicate)",
              "a_imp_null": "max over members of κ per label permutation (same permutations for every member)",
              "a_hum": "κ of each annotator against the strict majority of the others on a_imp's label space, "
                       "pooled over held-out labels, each annotator of an item with m labels weighing 1/m; no strict "
                       "majority or a label outside the space: not scored",
              "multiple_testing": "Benjamini–Hochberg across the rows of each table of p-values",
              "null": {"item": "labels permuted within group (singleton groups pooled into one stratum), "
                                "same folds",
                       "paired": "each pair's two sides permuted (label swapped with probability 1/2), "
                                 "same folds"}}
    return ValidationPowerResult(tuple(results), tuple(transfers), config, dict(set_meta or {}))
