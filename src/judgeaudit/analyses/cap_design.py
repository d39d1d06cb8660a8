"""CAP design: the judge requests a live CAP run sends, and the tables their verdicts become.

* ``pairwise_requests``: every pair in both orders (conditional-accuracy-profiles.txt §3.3:
  "every item is evaluated in both A/B and B/A orderings"), ``request_id = "{pair_id}|AB"`` /
  ``"{pair_id}|BA"``; the BA request shows ``response_b`` first.
* ``two_order_table``: a verdict table (``records.VERDICT_COLUMNS``) back into the per-item
  two-order table the published judges also use (``choice_ba`` mapped to the original frame),
  API failures (``error`` set) and parse failures (``parse_ok`` false) kept as failures.
* C8 (Table 1, §3.3, Appendix B.4 / C): ``rationale_requests`` asks an evaluator, on items the
  judge got right under the A/B ordering, whether the A/B rationale identifies the relevant error
  or criterion; the evaluator may not share the judge's family unless explicitly allowed
  (recorded). ``rationale_labels`` parses its yes/no answers; ``evaluator_agreement`` compares
  them with a human-labelled sample (raw agreement and Cohen's κ).

No model calls here: the command layer runs the requests through the executor.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd

from judgeaudit.datasets._common import SWAPPED_CHOICE, TWO_ORDER_COLUMNS, table_family
from judgeaudit.errors import InputError
from judgeaudit.families import shared, unknown_family_message, vendors
from judgeaudit.records import JudgeRequest
from judgeaudit.stats.agreement import cohen_kappa

ORDERS = ("AB", "BA")


def pairwise_requests(pairs: pd.DataFrame) -> list[JudgeRequest]:
    """Two pairwise requests per pair: A/B as given and B/A swapped."""
    out = []
    for r in pairs.itertuples(index=False):
        meta = {"pair_id": r.pair_id, "source_set": getattr(r, "source_set", None)}
        out.append(JudgeRequest(request_id=f"{r.pair_id}|AB", form="pairwise", prompt=r.prompt,
                                response_a=r.response_a, response_b=r.response_b,
                                meta={**meta, "order": "AB"}))
        out.append(JudgeRequest(request_id=f"{r.pair_id}|BA", form="pairwise", prompt=r.prompt,
                                response_a=r.response_b, response_b=r.response_a,
                                meta={**meta, "order": "BA"}))
    return out


def two_order_table(verdicts: pd.DataFrame, judge_id: str | None = None) -> pd.DataFrame:
    """Per-item two-order table (``TWO_ORDER_COLUMNS``) from a pairwise verdict table.

    A verdict with ``error`` set is an API failure; one with ``parse_ok`` false or no choice is a
    parse failure. Request ids must end in ``|AB`` or ``|BA``."""
    v = verdicts if judge_id is None else verdicts[verdicts["judge_id"] == judge_id]
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for r in v.itertuples(index=False):
        pid, sep, order = str(r.request_id).rpartition("|")
        if not sep or order not in ORDERS:
            raise InputError(f"request_id {r.request_id!r} does not end in |AB or |BA", field="request_id")
        o = order.lower()
        row = rows.setdefault((r.judge_id, pid), {
            "pair_id": pid, "judge_id": r.judge_id, "family": getattr(r, "family", None),
            "choice_ab": None, "choice_ba": None, "rationale_ab": None, "rationale_ba": None,
            "failure_ab": "api", "failure_ba": "api", "model": getattr(r, "model", None)})
        err = getattr(r, "error", None)
        choice = getattr(r, "choice", None)
        if isinstance(err, str) and err:
            failure, choice = "api", None
        elif not bool(getattr(r, "parse_ok", False)) or choice not in ("A", "B", "tie"):
            failure, choice = "parse", None
        else:
            failure = None
            if o == "ba":
                choice = SWAPPED_CHOICE[choice]
        row[f"choice_{o}"] = choice
        row[f"failure_{o}"] = failure
        rat = getattr(r, "rationale", None)
        row[f"rationale_{o}"] = rat if isinstance(rat, str) else None
    return pd.DataFrame(list(rows.values()), columns=list(TWO_ORDER_COLUMNS) + ["model"])


def failure_counts(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per judge: calls, API failures and parse failures (Appendix L's raw counts)."""
    v = verdicts.copy()
    api = v["error"].notna() & (v["error"].astype(str) != "")
    parse = ~api & ~v["parse_ok"].astype(bool)
    return (v.assign(api=api, parse=parse).groupby("judge_id")
            .agg(calls=("request_id", "size"), api_failures=("api", "sum"), parse_failures=("parse", "sum"))
            .reset_index())


# ------------------------------------------------------------------------------------------ C8

FORM_A = """You are checking the explanation an automatic judge gave for choosing between two answers.

Question:
{prompt}

Correct answer (the judge chose it):
{chosen}

Incorrect answer:
{rejected}

The incorrect answer contains one planted error of type: {error_type}.

The judge's explanation:
{rationale}

Does the explanation point to the specific planted error in the incorrect answer? Answer NO when it
only says one answer is better or more accurate in general, or when it names some other problem.
Reply with JSON only: {{"supports": "yes" or "no", "reason": "<one sentence>"}}"""

FORM_B = """You are checking the explanation an automatic judge gave for choosing between two answers.

Question:
{prompt}

Answer the judge chose (the better one):
{chosen}

Answer the judge rejected:
{rejected}

The judge's explanation:
{rationale}

Does the explanation name a specific, substantive reason the chosen answer is better: a concrete
deficiency of the rejected answer (a factual error, a logical flaw, missing key information, wrong
reasoning) or a concrete strength the rejected answer lacks? Answer NO for generic praise ("A is
better / more accurate") or surface properties only (length, formatting, confident tone).
Reply with JSON only: {{"supports": "yes" or "no", "reason": "<one sentence>"}}"""


def check_evaluator_family(evaluator_family: str | None, judge_families: dict[str, str | None],
                           allow_same_family: bool = False) -> list[str]:
    """Judges the evaluator may not grade (§3.3: the evaluator must not share the judge's family):
    those sharing a vendor with it, and, when either family is unknown, those the rule cannot decide
    (marked "(family unknown)"). Raises ``InputError`` when there are any and ``allow_same_family``
    is false; reference instruments (no family) never clash."""
    if vendors(evaluator_family) is None:
        if not allow_same_family:
            raise InputError(unknown_family_message("C8 evaluator") + "; or pass --allow-same-family "
                             "(recorded in the result)", field="evaluator")
        return [f"{j} (family unknown)" for j in sorted(judge_families)]
    same, unknown = [], []
    for j, f in sorted(judge_families.items()):
        common = shared(evaluator_family, f)
        if common is None:
            unknown.append(j)
        elif common:
            same.append(j)
    if (same or unknown) and not allow_same_family:
        parts = []
        if same:
            parts.append(f"the C8 evaluator's family {evaluator_family!r} is the family of judge(s) "
                         f"{', '.join(same)}; use an evaluator from another family")
        if unknown:
            parts.append(f"the model family of judge(s) {', '.join(unknown)} is unknown to the family table, so "
                         "the evaluator cannot be shown to be of another family; give it with family=<vendor>")
        raise InputError("; ".join(parts) + " or pass --allow-same-family (recorded in the result)",
                         field="evaluator")
    return same + [f"{j} (family unknown)" for j in unknown]


def rationale_requests(pairs: pd.DataFrame, tables: dict[str, pd.DataFrame], *,
                       evaluator_family: str | None, allow_same_family: bool = False) -> list[JudgeRequest]:
    """Evaluator requests for C8: one per (judge, item) whose A/B verdict is correct and carries a
    rationale (Appendix B.4 position alignment: only A/B rationales). Form A when the pairs carry a
    planted ``failure_type``, Form B otherwise. Refuses a same-family evaluator (see
    ``check_evaluator_family``)."""
    check_evaluator_family(evaluator_family, {j: table_family(t) for j, t in tables.items()}, allow_same_family)
    p = pairs.set_index("pair_id")
    has_type = "failure_type" in p.columns
    out = []
    for jid, t in tables.items():
        ok = t[t["choice_ab"].notna() & t["rationale_ab"].notna() & t["pair_id"].isin(p.index)]
        for r in ok.itertuples(index=False):
            item = p.loc[r.pair_id]
            if r.choice_ab != item["label"]:
                continue
            chosen, rejected = ((item["response_a"], item["response_b"]) if item["label"] == "A"
                                else (item["response_b"], item["response_a"]))
            if has_type and isinstance(item.get("failure_type"), str):
                text = FORM_A.format(prompt=item["prompt"], chosen=chosen, rejected=rejected,
                                     error_type=item["failure_type"], rationale=r.rationale_ab)
            else:
                text = FORM_B.format(prompt=item["prompt"], chosen=chosen, rejected=rejected,
                                     rationale=r.rationale_ab)
            out.append(JudgeRequest(request_id=f"{r.pair_id}|{jid}|C8", form="generate", prompt=text,
                                    meta={"pair_id": r.pair_id, "judge_id": jid}))
    return out


_YES = re.compile(r'"?(supports|rationale_correct)"?\s*:\s*"?(yes|no|1|0|true|false)"?', re.I)


def parse_support(raw: str | None) -> bool | None:
    """Evaluator reply -> True/False, None when unreadable."""
    if not raw:
        return None
    text = raw.strip()
    try:
        obj = json.loads(text[text.find("{"): text.rfind("}") + 1]) if "{" in text else None
    except json.JSONDecodeError:
        obj = None
    if isinstance(obj, dict):
        for k in ("supports", "rationale_correct"):
            if k in obj:
                v = str(obj[k]).strip().lower()
                if v in ("yes", "1", "true"):
                    return True
                if v in ("no", "0", "false"):
                    return False
    m = _YES.search(text)
    if m:
        return m.group(2).lower() in ("yes", "1", "true")
    first = re.match(r"\W*(yes|no)\b", text, re.I)
    if first:
        return first.group(1).lower() == "yes"
    return None


def rationale_labels(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Evaluator verdicts (request ids ``pair|judge|C8``) -> (pair_id, judge_id, supports,
    evaluator_id). ``supports`` is None for failed or unreadable evaluator calls."""
    rows = []
    for r in verdicts.itertuples(index=False):
        head, _, tag = str(r.request_id).rpartition("|")
        if tag != "C8":
            continue
        pid, _, jid = head.partition("|")
        err = getattr(r, "error", None)
        sup = None if (isinstance(err, str) and err) else parse_support(getattr(r, "raw", None))
        rows.append({"pair_id": pid, "judge_id": jid, "supports": sup, "evaluator_id": r.judge_id})
    return pd.DataFrame(rows, columns=["pair_id", "judge_id", "supports", "evaluator_id"])


def evaluator_agreement(labels: pd.DataFrame, human: pd.DataFrame) -> dict[str, Any]:
    """Agreement of the C8 evaluator with a human-labelled sample (Appendix C): raw agreement,
    Cohen's κ and the 2x2 confusion counts, on (pair_id, judge_id) rows both labelled.

    ``human`` has columns pair_id, judge_id, human (bool or 0/1)."""
    for c in ("pair_id", "judge_id", "human"):
        if c not in human.columns:
            raise InputError("human-labelled sample lacks a column", field=c)
    m = labels.dropna(subset=["supports"]).merge(human.dropna(subset=["human"]), on=["pair_id", "judge_id"])
    if m.empty:
        return {"n": 0, "agreement": None, "kappa": None, "confusion": None}
    e = m["supports"].astype(bool).astype(int).to_numpy()
    h = m["human"].astype(bool).astype(int).to_numpy()
    conf = {f"e{a}_h{b}": int(((e == a) & (h == b)).sum()) for a in (0, 1) for b in (0, 1)}
    return {"n": int(len(m)), "agreement": float((e == h).mean()), "kappa": cohen_kappa(e, h),
            "confusion": conf}
