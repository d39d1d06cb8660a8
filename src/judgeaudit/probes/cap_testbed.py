"""Controlled CAP material built with a generator judge (conditional-accuracy-profiles.txt §3.2,
§3.3, Appendix A, B.2–B.3).

* ``build_testbed``: a judgerEva-style testbed from any QA source — the correct answer expanded
  into a short explanation (Answer A), a flawed counterpart (Answer B) with exactly one planted
  error of a named type (factual fabrication, logical reversal, scope-overclaim, scope-omission),
  a subtlety gate scored 1–5 by a judge from another family with bounded regeneration (items
  whose best attempt stays below the threshold are kept and flagged ``low_quality``), and three
  presentation variants (plain, polished, length-padded), each length-checked and checked for
  label preservation (``variant_qc``; App. A.6) and regenerated when it fails, a bounded number
  of times, with every rejection recorded.
* ``augment_pairs``: style-polished and length-padded variants of an existing benchmark's pairs,
  admissible only when the adapter says the pair shares a source model and labels are objective
  (``AUGMENTATION_ADMISSIBLE``); otherwise the cells stay ``unavailable``. The same QC applies
  (Table 12: "label-preservation checked").

Every model call goes through ``runtime.executor.run`` (and the call store when given).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd

from judgeaudit.datasets._common import CoverageCell
from judgeaudit.errors import InputError
from judgeaudit.families import judge_family, shared, unknown_family_message, vendors
from judgeaudit.judges.base import Judge
from judgeaudit.probes.variant_qc import variant_problem
from judgeaudit.records import JudgeRequest

if TYPE_CHECKING:
    from judgeaudit.runtime.context import RunContext

ERROR_TYPES = ("factual_fabrication", "logical_reversal", "scope_overclaim", "scope_omission")
CONDITION_OF_ERROR = dict(zip(ERROR_TYPES, ("C1", "C2", "C3", "C4"), strict=True))
SOURCE_SET = "cap_testbed"

#: A built testbed measures every condition directly (Table 2 column "judgerEva").
COVERAGE: dict[str, CoverageCell] = {
    "C1": CoverageCell("direct", "planted factual-fabrication items (plain); PA", ("factual_fabrication",),
                       ("original",)),
    "C2": CoverageCell("direct", "planted logical-reversal items (plain); PA", ("logical_reversal",), ("original",)),
    "C3": CoverageCell("direct", "planted scope-overclaim items (plain); PA", ("scope_overclaim",), ("original",)),
    "C4": CoverageCell("direct", "planted scope-omission items (plain); PA", ("scope_omission",), ("original",)),
    "C5": CoverageCell("direct", "constructed polished variant vs. plain; BC", variants=("original", "polished")),
    "C6": CoverageCell("direct", "constructed length-padded (~2x Answer B) vs. plain; BC",
                       variants=("original", "padded")),
    "C7": CoverageCell("direct", "A/B and B/A orderings of every item and variant; BC"),
    "C8": CoverageCell("direct", "evaluator on correct-verdict (A/B) rationales, Form A (planted error)",
                       variants=("original",)),
}

EXPAND = """Rewrite the short correct answer below as a clear explanation of three to five sentences that
states the answer and why it is right. Do not add uncertain claims.

Question:
{question}

Correct answer:
{answer}

Explanation:"""

FLAW = {
    "factual_fabrication": "Insert exactly one plausible but unsupported factual claim (an invented entity, "
                           "mechanism, number or reference) that still sounds credible in context.",
    "logical_reversal": "Reverse exactly one logical relation (cause and effect, necessary versus sufficient, "
                        "an inequality or an implication) while keeping the wording and tone almost the same.",
    "scope_overclaim": "Remove the hedging from one qualified statement so that it becomes an absolute claim "
                       "(always, never, all, guaranteed).",
    "scope_omission": "Delete exactly one essential limiting condition (a population, an exception, a time "
                      "frame, a contraindication or a prerequisite) while keeping the text fluent and complete-looking.",
}

FLAWED = """Here is a correct explanation answering a question.

Question:
{question}

Correct explanation:
{answer}

Write a new version of the explanation with one deliberate error. {instruction} Change nothing else,
keep about the same length, and do not mark or mention the error.

Flawed explanation:"""

SUBTLETY = """Two explanations answer the same question; the second contains one deliberate error of type
"{error_type}".

Question:
{question}

Explanation 1:
{answer}

Explanation 2:
{flawed}

How hard is the error in Explanation 2 to notice? Reply with one digit from 1 (obvious at a glance) to 5
(needs domain expertise to detect), then nothing else."""

POLISH = """Rewrite the text below in a more polished, formal and authoritative style. Keep every factual
claim, number, argument and conclusion exactly; change only wording, sentence structure and flow, and
keep the length within 20% of the original.

Text:
{text}

Polished version:"""

PAD = """Make the text below about {factor} times as long. Keep every factual claim, argument and conclusion
exactly as it is; add only redundant phrasing, restatements and elaborations of points already made.
Do not add new facts or conclusions.

Text:
{text}

Longer version:"""


def _run(judge: Judge, requests: list[JudgeRequest], store_path: Path | None,
         context: RunContext | None = None) -> dict[str, str | None]:
    """request_id -> completion text (None for a failed call); the calls made in ``context``."""
    from judgeaudit.runtime.executor import run

    if not requests:
        return {}
    if store_path is not None:
        from judgeaudit.runtime.store import CallStore

        with CallStore(store_path) as store:
            verdicts = run(judge, requests, store=store, progress=False, context=context)
    else:
        verdicts = run(judge, requests, progress=False, context=context)
    return {v.request_id: (v.raw if v.error is None else None) for v in verdicts}


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    t = text.strip()
    return t if len(t) >= 10 else None


class _Variant(NamedTuple):
    """One variant to generate: its prompt, the text it rewrites, 'polished' or 'padded', the
    padding factor and the answer that must stay stated (``variant_qc.variant_problem``)."""

    prompt: str
    original: str
    kind: str
    factor: float = 2.0
    anchor: str | None = None


def _checked_variants(generator: Judge, jobs: dict[str, _Variant], store: Path | None,
                      max_retries: int,
                      context: RunContext | None = None) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Generates every job, checks it (length band and label preservation), and regenerates the
    rejected ones (a new epoch per attempt), at most ``max_retries`` times. Returns the accepted
    texts and, per job, the reason of every rejected attempt."""
    accepted: dict[str, str] = {}
    rejections: dict[str, list[str]] = {k: [] for k in jobs}
    pending = list(jobs)
    for attempt in range(max_retries + 1):
        if not pending:
            break
        rid = {k: k if attempt == 0 else f"{k}|{attempt}" for k in pending}
        got = _run(generator, [JudgeRequest(request_id=rid[k], form="generate", epoch=attempt,
                                            prompt=jobs[k].prompt) for k in pending], store, context)
        nxt = []
        for k in pending:
            job, text = jobs[k], _clean(got.get(rid[k]))
            problem = ("no usable text" if text is None else
                       variant_problem(job.kind, job.original, text, factor=job.factor, anchor=job.anchor))
            if problem is None:
                accepted[k] = text  # type: ignore[assignment]
            else:
                rejections[k].append(problem)
                nxt.append(k)
        pending = nxt
    return accepted, rejections


def parse_subtlety(text: str | None) -> int | None:
    """First digit 1–5 in the gate's reply."""
    if not text:
        return None
    m = re.search(r"[1-5]", text)
    return int(m.group(0)) if m else None


def build_testbed(source: pd.DataFrame, *, generator: Judge, gate: Judge,
                  error_types: tuple[str, ...] = ERROR_TYPES, threshold: int = 4, max_retries: int = 3,
                  pad_factor: float = 2.0, allow_same_family: bool = False,
                  store_path: str | Path | None = None, qc_retries: int = 3,
                  context: RunContext | None = None) -> list[dict[str, Any]]:
    """Build a controlled pairwise testbed from a QA source (columns ``question``, ``answer``,
    optional ``id``, ``domain``).

    Error types are assigned round-robin in source order (balanced). For each item: expand the
    answer (Answer A); generate a flawed Answer B of its type; score subtlety with ``gate``;
    regenerate (new epoch) while the score is below ``threshold``, at most ``max_retries`` times,
    keeping the most subtle attempt (flagged ``low_quality`` if still below). Then the polished
    variant (both answers rewritten) and the length-padded variant (Answer B only, ~``pad_factor``x),
    each checked (App. A.6: polished within ±20% of the original length, padded within
    ``pad_factor`` ± 15%, i.e. [1.7x, 2.3x] at 2x; label preserved: ``variant_qc``) and regenerated
    when rejected, at most ``qc_retries`` times; a variant still rejected is left out and recorded
    (``meta["qc"]``: every rejection's reason per variant; ``meta["dropped_variants"]``).
    The gate must come from another family than the generator unless ``allow_same_family``.

    Returns pairwise rows (``PAIRWISE_COLUMNS`` + base_id, variant, failure_type, subtlety,
    low_quality, attempts); the better answer is ``response_a`` (label ``'A'``), as in the paper's
    construction: CAP judges every item in both orders.
    """
    for c in ("question", "answer"):
        if c not in source.columns:
            raise InputError("QA source lacks a column", field=c)
    bad = [t for t in error_types if t not in FLAW]
    if bad or not error_types:
        raise InputError(f"unknown error type(s) {bad}; known: {', '.join(ERROR_TYPES)}", field="error_type")
    gen_family = judge_family(generator)
    common = shared(gen_family, judge_family(gate))
    if not allow_same_family and common is None:
        who = "generator" if vendors(gen_family) is None else "subtlety gate"
        raise InputError(unknown_family_message(who) + ", or allow a shared family explicitly", field="gate")
    if not allow_same_family and common:
        raise InputError(f"the subtlety gate shares the generator's family {'+'.join(sorted(common))!r}; use a "
                         "gate from another family or allow it explicitly", field="gate")
    src = source.reset_index(drop=True)
    ids = [str(x) for x in (src["id"] if "id" in src.columns else range(len(src)))]
    store = Path(store_path) if store_path else None

    exp = _run(generator, [JudgeRequest(request_id=f"{i}|expand", form="generate",
                                        prompt=EXPAND.format(question=q, answer=a))
                           for i, q, a in zip(ids, src["question"], src["answer"])], store, context)
    items = {}
    for k, (i, q) in enumerate(zip(ids, src["question"])):
        a = _clean(exp.get(f"{i}|expand"))
        if a is not None:
            items[i] = {"question": str(q), "answer": a, "source_answer": str(src["answer"].iloc[k]),
                        "type": error_types[k % len(error_types)],
                        "best": None, "score": None, "attempts": 0}
    pending = list(items)
    for attempt in range(max_retries + 1):
        if not pending:
            break
        reqs = [JudgeRequest(request_id=f"{i}|flaw|{attempt}", form="generate", epoch=attempt,
                             prompt=FLAWED.format(question=items[i]["question"], answer=items[i]["answer"],
                                                  instruction=FLAW[items[i]["type"]]))
                for i in pending]
        flawed = _run(generator, reqs, store, context)
        gate_reqs, cand = [], {}
        for i in pending:
            items[i]["attempts"] += 1
            b = _clean(flawed.get(f"{i}|flaw|{attempt}"))
            if b is None or b == items[i]["answer"]:
                continue
            cand[i] = b
            gate_reqs.append(JudgeRequest(request_id=f"{i}|gate|{attempt}", form="generate",
                                          prompt=SUBTLETY.format(error_type=items[i]["type"].replace("_", " "),
                                                                 question=items[i]["question"],
                                                                 answer=items[i]["answer"], flawed=b)))
        scores = _run(gate, gate_reqs, store, context)
        nxt = []
        for i in pending:
            if i in cand:
                s = parse_subtlety(scores.get(f"{i}|gate|{attempt}"))
                if items[i]["best"] is None or (s or 0) > (items[i]["score"] or 0):
                    items[i]["best"], items[i]["score"] = cand[i], s
            if items[i]["score"] is None or items[i]["score"] < threshold:
                nxt.append(i)
        pending = nxt
    ready = [i for i in items if items[i]["best"] is not None]
    jobs: dict[str, _Variant] = {}
    for i in ready:
        it = items[i]
        jobs[f"{i}|polish|a"] = _Variant(POLISH.format(text=it["answer"]), it["answer"], "polished",
                                         anchor=it["source_answer"])
        jobs[f"{i}|polish|b"] = _Variant(POLISH.format(text=it["best"]), it["best"], "polished")
        jobs[f"{i}|pad"] = _Variant(PAD.format(factor=pad_factor, text=it["best"]), it["best"], "padded", pad_factor)
    got, rejected = _checked_variants(generator, jobs, store, qc_retries, context)
    rows: list[dict[str, Any]] = []
    for i in ready:
        it = items[i]
        low = it["score"] is None or it["score"] < threshold
        variants = {"original": (it["answer"], it["best"])}
        pa, pb = got.get(f"{i}|polish|a"), got.get(f"{i}|polish|b")
        if pa and pb:
            variants["polished"] = (pa, pb)
        pd_ = got.get(f"{i}|pad")
        if pd_:
            variants["padded"] = (it["answer"], pd_)
        qc = {"polished": [f"A: {x}" for x in rejected[f"{i}|polish|a"]]
              + [f"B: {x}" for x in rejected[f"{i}|polish|b"]],
              "padded": [f"B: {x}" for x in rejected[f"{i}|pad"]]}
        dropped = [v for v in ("polished", "padded") if v not in variants]
        for v, (a, b) in variants.items():
            rows.append({
                "pair_id": f"{SOURCE_SET}/{i}|{v}", "prompt": it["question"], "response_a": a, "response_b": b,
                "label": "A", "group": it["question"], "source_set": SOURCE_SET, "subset": it["type"],
                "condition_a": f"{generator.id}:expanded", "condition_b": f"{generator.id}:{it['type']}",
                "meta": {"subtlety": it["score"], "low_quality": low, "attempts": it["attempts"],
                         "gate": gate.id, "generator": generator.id, "qc": qc, "dropped_variants": dropped},
                "base_id": f"{SOURCE_SET}/{i}", "variant": v, "failure_type": it["type"],
                "subtlety": it["score"], "low_quality": low, "attempts": it["attempts"],
                "qc_rejections": len(qc.get(v, [])),
            })
    return rows


def load_pairs(path: str | Path) -> pd.DataFrame:
    """Read a built testbed (JSONL written by ``judgeaudit cap build``)."""
    from judgeaudit.io import iter_jsonl

    rows = [obj for _, obj in iter_jsonl(path)]
    if not rows:
        raise InputError("testbed file holds no items", path=path)
    for n, r in enumerate(rows, 1):
        for c in ("pair_id", "response_a", "response_b", "label", "base_id", "variant"):
            if c not in r:
                raise InputError("required field is missing", path=path, line=n, field=c)
    return pd.DataFrame(rows)


def augment_pairs(pairs: pd.DataFrame, *, generator: Judge, admissible: bool,
                  kinds: tuple[str, ...] = ("style", "length"), pad_factor: float = 1.5,
                  store_path: str | Path | None = None, qc_retries: int = 3,
                  context: RunContext | None = None) -> pd.DataFrame:
    """Controlled augmentation of an existing benchmark (§3.3, Appendix B.2–B.3): ``style``
    rewrites both responses in a polished style (variant ``polished``); ``length`` pads only the
    rejected response to ~``pad_factor``x (variant ``padded``). Rows are marked ``augmented`` with
    ``base_id`` the original pair, so CAP uses them only for the augmented C5/C6 cells.

    Every generated text is checked as in the testbed (length band; label preserved: the final
    answer and the numbers of each response unchanged, ``variant_qc``) and regenerated when
    rejected, at most ``qc_retries`` times; a pair whose variant stays rejected gets no such variant.
    Variant rows carry ``qc_rejections`` (rejected attempts); ``df.attrs["qc"]`` lists every
    rejection (pair_id, variant, reason, dropped).

    Raises ``InputError`` when the adapter declares augmentation inadmissible (pairs not from one
    source model or labels not objective): the cells then stay unavailable."""
    if not admissible:
        raise InputError("augmentation is not admissible for this set (pairs do not share a source model or "
                         "labels are not objective); its style/length cells stay unavailable", field="augment")
    store = Path(store_path) if store_path else None
    base = pairs[pairs["label"].isin(["A", "B"])].copy()
    if "augmented" in base.columns:
        base = base[~base["augmented"].fillna(False).astype(bool)]
    out = [pairs.assign(base_id=pairs["base_id"] if "base_id" in pairs.columns else pairs["pair_id"],
                        variant=pairs["variant"] if "variant" in pairs.columns else "original",
                        augmented=pairs["augmented"] if "augmented" in pairs.columns else False)]
    side = {r.pair_id: ("b" if r.label == "A" else "a") for r in base.itertuples(index=False)}
    jobs: dict[str, _Variant] = {}
    owner: dict[str, tuple[str, str]] = {}
    for r in base.itertuples(index=False):
        if "style" in kinds:
            for s in ("a", "b"):
                text = getattr(r, f"response_{s}")
                jobs[f"{r.pair_id}|polish|{s}"] = _Variant(POLISH.format(text=text), text, "polished")
                owner[f"{r.pair_id}|polish|{s}"] = (r.pair_id, "polished")
        if "length" in kinds:
            text = getattr(r, f"response_{side[r.pair_id]}")
            jobs[f"{r.pair_id}|pad"] = _Variant(PAD.format(factor=pad_factor, text=text), text, "padded", pad_factor)
            owner[f"{r.pair_id}|pad"] = (r.pair_id, "padded")
    got, rejected = _checked_variants(generator, jobs, store, qc_retries, context)
    log = [{"pair_id": owner[k][0], "variant": owner[k][1], "reason": x, "dropped": k not in got}
           for k, xs in rejected.items() for x in xs]
    rows = []
    for r in base.itertuples(index=False):
        if "style" in kinds:
            a, b = got.get(f"{r.pair_id}|polish|a"), got.get(f"{r.pair_id}|polish|b")
            if a and b:
                rows.append({**r._asdict(), "pair_id": f"{r.pair_id}|polished", "response_a": a, "response_b": b,
                             "base_id": r.pair_id, "variant": "polished", "augmented": True,
                             "qc_rejections": len(rejected[f"{r.pair_id}|polish|a"])
                             + len(rejected[f"{r.pair_id}|polish|b"])})
        if "length" in kinds:
            p = got.get(f"{r.pair_id}|pad")
            if p:
                d = {**r._asdict(), "pair_id": f"{r.pair_id}|padded", "base_id": r.pair_id, "variant": "padded",
                     "augmented": True, "qc_rejections": len(rejected[f"{r.pair_id}|pad"])}
                d[f"response_{side[r.pair_id]}"] = p
                rows.append(d)
    out.append(pd.DataFrame(rows))
    df = pd.concat(out, ignore_index=True)
    df.attrs["qc"] = log
    return df
