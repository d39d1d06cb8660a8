"""promptfoo interoperability, both directions (no promptfoo package is needed on judgeaudit's side).

**Import** — ``replay:promptfoo:<results.json>[?id=VAR&metric=NAME&scale=LO,HI]``: the file
``promptfoo eval -o results.json`` writes (promptfoo's ``OutputFile``: ``{"evalId", "results": {"version",
"timestamp", "results": [EvaluateResult, …], "prompts", "stats"}, "config", "shareableUrl"}``) as a replay judge.
Each ``EvaluateResult`` (one test × prompt × provider) is one verdict row:

* ``request_id`` = the test's ``vars[VAR]`` (``?id=VAR``; default var ``id``), else the test's
  ``description``, else ``test-<testIdx>``; a test repeated (``--repeat``) gets epochs 0, 1, … in file order.
* judge = the grading of one prompt × provider: a file with several (``promptIdx``, provider) combinations
  becomes one judge per combination, ``promptfoo:<provider label or id>[#<promptIdx>]``.
* the verdict is the test's ``gradingResult``: ``label`` = its ``pass``, ``score`` = its ``score`` on the judges'
  1–9 scale (1 + 8·score for promptfoo's 0–1 scores; ``?scale=LO,HI`` for another range; a score off the range
  is an error), ``rationale`` = its ``reason``, ``raw`` = the provider's output. ``?metric=NAME`` reads a
  named score instead (``namedScores[NAME]``, with the pass and reason of the component assertion whose
  ``metric`` is NAME).
* nothing is dropped: a result that errored (``failureReason`` 2, or an ``error`` and no grading) is a verdict
  with that error (a failed call); a result with no grading result is a failed call too.
* a malformed file or result is an error naming the file, the result (its 1-based position as the line) and
  the field.

**Export** — :func:`get_assert`: promptfoo's Python assertion signature (``get_assert(output, context)``
returning ``{"pass", "score", "reason"}``) running a judgeaudit judge named in the assertion's ``config``::

    assert:
      - type: python
        value: file://judgeaudit_assert.py      # one line: from judgeaudit.interop.promptfoo import get_assert
        config:
          judge: api:openai/gpt-4o-mini          # any judgeaudit judge spec
          threshold: 5                           # pass when the grade on 1–9 is at least this (default 5)
          criterion: "Is the answer faithful?"   # optional; else judgeaudit's default graded template
          evidence_var: context                  # optional: the test var holding the evidence
          store: calls.sqlite                    # optional: a call store (reruns pay nothing twice)
          api_base: http://127.0.0.1:8000/v1     # optional, as are family and temperature (make_judge options)

The judge grades the output (``JudgeRequest`` form ``graded``: ``text`` = the output, ``evidence`` = the var
named by ``evidence_var``, ``question`` = the prompt). ``score`` is the grade mapped to promptfoo's 0–1 range,
(grade − 1) / 8, so the import above reads it back as the same grade. The pass threshold is judgeaudit's own
convention (the papers define none); a reply that does not parse or a failed call is ``pass: False`` with
``score`` 0 and the reason saying so.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pandas as pd

from judgeaudit.errors import InputError
from judgeaudit.io import read_text
from judgeaudit.judges.base import Judge
from judgeaudit.judges.replay import (ReplayJudge, _judge_of, normalise_replay_table, parse_scale, parse_spec,
                                     register_format)
from judgeaudit.records import JudgeRequest

_OPTIONS = ("id", "metric", "scale", "judge")
DEFAULT_ID_VAR = "id"
DEFAULT_THRESHOLD = 5.0
ERROR = 2   # promptfoo's ResultFailureReason.ERROR


def read_results(path: str) -> list[dict[str, Any]]:
    """The ``EvaluateResult`` list of a promptfoo output file (``results.results``)."""
    p = Path(path)
    if not p.is_file():
        raise InputError("file not found", path=path)
    try:
        doc = json.loads(read_text(p))   # not UTF-8: one line naming its line
    except json.JSONDecodeError as e:
        raise InputError(f"not JSON ({e.msg})", path=path, line=e.lineno, field="results") from None
    summary = doc.get("results") if isinstance(doc, dict) else None
    results = summary.get("results") if isinstance(summary, dict) else None
    if not isinstance(results, list):
        raise InputError("not a promptfoo output file: it needs results.results, a list (promptfoo eval -o "
                         "results.json)", path=path, field="results.results")
    for i, r in enumerate(results, start=1):
        if not isinstance(r, dict):
            raise InputError("each result must be a JSON object", path=path, line=i, field="results.results")
    return results


def _judge_key(r: dict[str, Any]) -> tuple[str, int]:
    prov = r.get("provider")
    name = (prov.get("label") or prov.get("id")) if isinstance(prov, dict) else prov
    return str(name or "provider"), int(r.get("promptIdx") or 0)


def _request_id(r: dict[str, Any], id_var: str) -> str:
    vars_ = r.get("vars") if isinstance(r.get("vars"), dict) else {}
    test = r.get("testCase") if isinstance(r.get("testCase"), dict) else {}
    tvars = test.get("vars") if isinstance(test.get("vars"), dict) else {}
    for value in (vars_.get(id_var), tvars.get(id_var), test.get("description"), r.get("description")):
        if value is not None and str(value).strip():
            return str(value)
    return f"test-{r.get('testIdx')}"


def _component(grading: dict[str, Any], metric: str) -> dict[str, Any] | None:
    """The component result of the assertion whose ``metric`` is ``metric`` (depth first)."""
    for c in grading.get("componentResults") or []:
        if not isinstance(c, dict):
            continue
        if isinstance(c.get("assertion"), dict) and c["assertion"].get("metric") == metric:
            return c
        if (found := _component(c, metric)) is not None:
            return found
    return None


def _row(r: dict[str, Any], line: int, path: str, id_var: str, metric: str | None,
         scale: tuple[float, float]) -> dict[str, Any]:
    row: dict[str, Any] = {"request_id": _request_id(r, id_var), "score": None, "label": None, "rationale": None,
                           "raw": None, "error": None}
    resp = r.get("response")
    if isinstance(resp, dict) and resp.get("output") is not None:
        out = resp["output"]
        row["raw"] = out if isinstance(out, str) else json.dumps(out)
    grading = r.get("gradingResult")
    if r.get("failureReason") == ERROR or (r.get("error") and not isinstance(grading, dict)):
        row["error"] = f"promptfoo error: {str(r.get('error') or 'the test errored')[:300]}"
        return row
    if not isinstance(grading, dict):
        row["error"] = "no gradingResult in the promptfoo result"
        return row

    def bad(field: str, msg: str) -> InputError:
        return InputError(f"result {row['request_id']!r}: {msg}", path=path, line=line, field=field)

    if metric is None:
        passed, score, reason, where = grading.get("pass"), grading.get("score"), grading.get("reason"), "gradingResult"
    else:
        named = grading.get("namedScores") or r.get("namedScores") or {}
        if metric not in named:
            row["error"] = f"no named score {metric!r} in this result"
            return row
        comp = _component(grading, metric) or {}
        passed, score, reason, where = comp.get("pass"), named[metric], comp.get("reason"), f"namedScores.{metric}"
    if passed is not None and not isinstance(passed, bool):
        raise bad(f"{where}.pass" if metric is None else "componentResults.pass", f"pass must be true or false, "
                                                                                  f"got {passed!r}")
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score):
            raise bad(f"{where}.score" if metric is None else where, f"score must be a number, got {score!r}")
        lo, hi = scale
        if not lo <= score <= hi:
            raise bad(f"{where}.score" if metric is None else where,
                      f"score {score!r} is outside the range {lo:g}–{hi:g} (another range: ?scale=LO,HI)")
        row["score"] = 1.0 + 8.0 * (float(score) - lo) / (hi - lo)
    row["label"] = passed
    row["rationale"] = reason if isinstance(reason, str) else None
    return row


def results_tables(path: str, *, id_var: str = DEFAULT_ID_VAR, metric: str | None = None,
                   scale: tuple[float, float] = (0.0, 1.0)) -> dict[tuple[str, int], pd.DataFrame]:
    """One replay table per (provider, promptIdx) of a promptfoo output file, checked as a replay file is."""
    results = read_results(path)
    if not results:
        raise InputError("the promptfoo output holds no results", path=path, field="results.results")
    groups: dict[tuple[str, int], list[tuple[int, dict[str, Any]]]] = {}
    for line, r in enumerate(results, start=1):
        groups.setdefault(_judge_key(r), []).append((line, r))
    tables = {}
    for key, members in groups.items():
        rows, lines, seen = [], [], {}
        for line, r in members:
            row = _row(r, line, path, id_var, metric, scale)
            row["epoch"] = seen.get(row["request_id"], 0)   # a repeated test: epochs 0, 1, … in file order
            seen[row["request_id"]] = row["epoch"] + 1
            rows.append(row)
            lines.append(line)
        df = pd.DataFrame(rows, columns=["request_id", "epoch", "score", "label", "rationale", "raw", "error"])
        df["label"] = df["label"].astype(object)
        df.attrs["lines"] = lines
        tables[key] = normalise_replay_table(df, path)
    return tables


def _judges(argument: str, family: str | None, spec_id: str | None, *, one: bool) -> list[Judge]:
    path, mapping = parse_spec(argument)
    if not path:
        raise InputError("replay:promptfoo needs a promptfoo output file: replay:promptfoo:<results.json>",
                         field="judge")
    unknown = sorted(set(mapping) - set(_OPTIONS))
    if unknown:
        raise InputError(f"unknown option {unknown[0]!r} for replay:promptfoo (options: {', '.join(_OPTIONS)})",
                         path=path, field=unknown[0])
    tables = results_tables(path, id_var=mapping.get("id", DEFAULT_ID_VAR), metric=mapping.get("metric"),
                            scale=parse_scale(mapping.get("scale"), path) or (0.0, 1.0))
    names = {k: k[0] if sum(1 for x in tables if x[0] == k[0]) == 1 else f"{k[0]}#{k[1]}" for k in tables}
    wanted = mapping.get("judge")
    if wanted is not None:
        chosen = [k for k in tables if names[k] == wanted]
        if not chosen:
            raise InputError(f"no provider {wanted!r} in the file (judges: {', '.join(names.values())})", path=path,
                             field="judge")
    else:
        chosen = list(tables)
    if one and len(chosen) > 1:
        raise InputError(f"the file holds {len(chosen)} prompt × provider gradings ({', '.join(names[k] for k in chosen)});"
                         " pick one with ?judge=NAME", path=path, field="judge")
    judges: list[Judge] = []
    for k in chosen:
        if len(chosen) == 1 and spec_id is not None:
            jid = spec_id
        elif len(chosen) == 1:
            jid = f"replay:promptfoo:{argument}"
        else:
            jid = f"replay:promptfoo:{path}?{urlencode({**mapping, 'judge': names[k]})}"
        judge: ReplayJudge = _judge_of(tables[k], f"{path}?judge={names[k]}", None, jid, family)
        judges.append(judge)
    return judges


def promptfoo_judges(argument: str) -> list[Judge]:
    """Every prompt × provider grading of a promptfoo output file as a judge (the CLI's ``replay:promptfoo:``)."""
    return _judges(argument, None, None, one=False)


def promptfoo_judge(argument: str, options: dict[str, Any]) -> Judge:
    """The judge ``make_judge("replay:promptfoo:<argument>")`` builds (the file's single grading, or ``?judge=``)."""
    judge, = _judges(argument, options.get("family"), options["id"], one=True)
    return judge


register_format("promptfoo", judges=promptfoo_judges, judge=promptfoo_judge,
                help="a promptfoo eval's output: replay:promptfoo:<results.json>[?id=VAR&metric=NAME&scale=LO,HI]")


# ---------------------------------------------------------------------------------------------- export


def _request(output: Any, context: dict[str, Any], config: dict[str, Any]) -> JudgeRequest:
    vars_ = context.get("vars") if isinstance(context.get("vars"), dict) else {}
    test = context.get("test") if isinstance(context.get("test"), dict) else {}
    id_var = config.get("id_var", DEFAULT_ID_VAR)
    rid = vars_.get(id_var) if vars_.get(id_var) is not None else test.get("description")
    evidence_var = config.get("evidence_var")
    evidence = vars_.get(evidence_var) if evidence_var else None
    if evidence_var and evidence is None:
        raise InputError(f"the test has no var {evidence_var!r} (evidence_var)", field="evidence_var")
    text = output if isinstance(output, str) else json.dumps(output)
    prompt = context.get("prompt")
    return JudgeRequest(request_id=str(rid if rid is not None else "promptfoo"), form="graded", text=text,
                        evidence=None if evidence is None else str(evidence), criterion=config.get("criterion"),
                        question=prompt if isinstance(prompt, str) else None)


def get_assert(output: Any, context: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's Python assertion: grade ``output`` with the judgeaudit judge ``context["config"]["judge"]``;
    returns promptfoo's ``GradingResult`` ``{"pass", "score", "reason"}`` (see the module docstring)."""
    from judgeaudit.judges.base import make_judge
    from judgeaudit.runtime.executor import run
    from judgeaudit.runtime.store import CallStore

    config = dict(context.get("config") or {})
    spec = config.pop("judge", None)
    if not isinstance(spec, str) or not spec:
        raise InputError("the assertion's config needs judge: a judgeaudit judge spec, e.g. api:openai/gpt-4o-mini",
                         field="config.judge")
    threshold = float(config.get("threshold", DEFAULT_THRESHOLD))
    options = {k: config[k] for k in ("api_base", "family", "temperature") if k in config}
    judge = make_judge(spec, **options)
    request = _request(output, context, config)
    store = CallStore(config["store"]) if config.get("store") else None
    try:
        verdict, = run(judge, [request], store=store, progress=False)
    finally:
        if store is not None:
            store.close()
    if verdict.error is not None:
        return {"pass": False, "score": 0.0, "reason": f"judgeaudit {judge.id}: the call failed: {verdict.error}"}
    if not verdict.parse_ok or verdict.score is None:
        why = (verdict.meta or {}).get("parse_error") or "no score"
        return {"pass": False, "score": 0.0, "reason": f"judgeaudit {judge.id}: the reply did not parse ({why})"}
    grade = float(verdict.score)
    reason = f"judgeaudit {judge.id}: grade {grade:.3g} on 1–9 (pass at ≥ {threshold:g})"
    if verdict.rationale:
        reason += f": {verdict.rationale}"
    return {"pass": grade >= threshold, "score": (grade - 1.0) / 8.0, "reason": reason}
