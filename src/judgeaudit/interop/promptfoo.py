"""promptfoo interoperability, both directions (no promptfoo package is needed on judgeaudit's side).

**Import** — ``replay:promptfoo:<results.json>[?id=VAR&metric=NAME&scale=LO,HI&template=NAME]``: the file
``promptfoo eval -o results.json`` writes (promptfoo's ``OutputFile``: ``{"evalId", "results": {"version",
"timestamp", "results": [EvaluateResult, …], "prompts", "stats"}, "config", "shareableUrl"}``) as a replay judge.
Each ``EvaluateResult`` (one test × prompt × provider) is one verdict row:

* an item is one of promptfoo's tests: promptfoo numbers every run of a test (``testIdx``: each repeat and
  each var combination its own), so a test is known by what promptfoo ran — its ``vars`` and its test case
  (description, assertions) — and its runs (``--repeat``) are its epochs: ``repeatIndex`` where the result
  records one, else 0, 1, … in ``testIdx`` order.
* ``request_id`` = the test's ``vars[VAR]`` (``?id=VAR``; default var ``id``; its runs are then numbered per
  id, or by the test's ``epoch`` var where it has one), else its ``description`` when
  no other test shares it (``<description> #k`` for the k-th of several), else ``test-<k>``, k the test's
  place among the file's tests (0-based, in ``testIdx`` order).
* judge = the grading of one prompt × provider: a file with several (``promptIdx``, provider) combinations
  becomes one judge per combination, ``promptfoo:<provider label or id>[#<promptIdx>]``.
* the verdict is the test's ``gradingResult``: ``label`` = its ``pass``, ``score`` = its ``score`` on the judges'
  1–9 scale (1 + 8·score for promptfoo's 0–1 scores; ``?scale=LO,HI`` for another range; a score off the range
  is an error), ``rationale`` = its ``reason``, ``raw`` = the provider's output. ``?metric=NAME`` reads a
  named score instead (``namedScores[NAME]``, with the pass and reason of the component assertion whose
  ``metric`` is NAME).
* nothing is dropped: a result that errored (``failureReason`` 2, or an ``error`` and no grading) is a verdict
  with that error (a failed call); a result with neither a grading result nor an output is a failed call too;
  one with an output and no grading (a test without assertions, as ``requests export`` writes them) is the
  reply as written, read with the judge's parser (``?template=NAME``: that template's). A grading by
  judgeaudit's own assertion (:func:`get_assert`) records its outcome in the metadata of its component
  result (``metadata.judgeaudit``): a failed judge call is read back as that failed call, a reply that did
  not parse as a parse failure, and a grade as that grade on the judge's scale.
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
convention (the papers define none). A judge on another scale (a template's) gives its grade's place on that
scale, (grade − min) / (max − min), and passes at the threshold on that scale. A reply that does not parse
or a failed call is ``pass: False`` with ``score`` 0 and the reason saying so — and ``metadata.judgeaudit``
(``error`` or ``parse_error``) saying which, so the import reads it back as a failed call or a parse
failure, never as a grade.
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
from judgeaudit.judges.replay import (ReplayJudge, check_options, normalise_replay_table,
                                     parse_scale, parse_spec, register_format, replay_judge, use_template)
from judgeaudit.judges.scale import Scale
from judgeaudit.records import JudgeRequest


def scale_of(d: dict[str, Any]) -> Scale:
    """The ``Scale`` a ``Scale.to_dict`` records."""
    if d.get("kind") == "pass_fail":
        return Scale.passfail()
    return Scale(min=int(d["min"]), max=int(d["max"]), higher=d.get("higher", "better"))

_OPTIONS = ("id", "metric", "scale", "judge", "template")
DEFAULT_ID_VAR = "id"
META_KEY = "judgeaudit"
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


def _id_var(r: dict[str, Any], id_var: str) -> str | None:
    vars_ = r.get("vars") if isinstance(r.get("vars"), dict) else {}
    test = r.get("testCase") if isinstance(r.get("testCase"), dict) else {}
    tvars = test.get("vars") if isinstance(test.get("vars"), dict) else {}
    for value in (vars_.get(id_var), tvars.get(id_var)):
        if value is not None and str(value).strip():
            return str(value)
    return None


def _epoch_var(r: dict[str, Any]) -> int | None:
    """The ``epoch`` var of a test (a request exported by ``requests export``), None when it has none."""
    test = r.get("testCase") if isinstance(r.get("testCase"), dict) else {}
    for vars_ in (r.get("vars"), test.get("vars")):
        if isinstance(vars_, dict) and "epoch" in vars_:
            v = vars_["epoch"]
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                return v
            if isinstance(v, str) and v.strip().isdigit():
                return int(v)
    return None


def _description(r: dict[str, Any]) -> str | None:
    test = r.get("testCase") if isinstance(r.get("testCase"), dict) else {}
    for value in (test.get("description"), r.get("description")):
        if value is not None and str(value).strip():
            return str(value)
    return None


def identity_of(r: dict[str, Any]) -> str:
    """What promptfoo ran for a result, the same for every repeat of one test: its vars and its test case
    (description, assertions, options), as canonical JSON."""
    test = r.get("testCase") if isinstance(r.get("testCase"), dict) else {}
    vars_ = test.get("vars") if isinstance(test.get("vars"), dict) else r.get("vars")
    case = {k: v for k, v in test.items() if k not in ("vars", "metadata")}
    return json.dumps({"vars": vars_, "case": case}, sort_keys=True, default=str)


def _order(results: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """Results in promptfoo's run order (``testIdx``, then file order)."""
    def key(item: tuple[int, dict[str, Any]]) -> tuple[float, int]:
        idx = item[1].get("testIdx")
        return (float(idx) if isinstance(idx, (int, float)) and not isinstance(idx, bool) else float("inf"),
                item[0])
    return sorted(results, key=key)


def request_ids(results: list[tuple[int, dict[str, Any]]], id_var: str) -> dict[str, str]:
    """Each test identity's request id (see the module docstring)."""
    tests: dict[str, dict[str, Any]] = {}
    for _, r in _order(results):
        tests.setdefault(identity_of(r), r)
    by_description: dict[str, list[str]] = {}
    for ident, r in tests.items():
        if _id_var(r, id_var) is None and (d := _description(r)) is not None:
            by_description.setdefault(d, []).append(ident)
    out = {}
    for k, (ident, r) in enumerate(tests.items()):
        if (given := _id_var(r, id_var)) is not None:
            out[ident] = given
        elif (d := _description(r)) is not None:
            shared = by_description[d]
            out[ident] = d if len(shared) == 1 else f"{d} #{shared.index(ident) + 1}"
        else:
            out[ident] = f"test-{k}"
    return out


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


def _judgeaudit_meta(grading: dict[str, Any]) -> dict[str, Any] | None:
    """What judgeaudit's assertion recorded of its grading (``metadata.judgeaudit`` of the grading result or
    of a component result, depth first), None when it graded none of it."""
    meta = grading.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get(META_KEY), dict):
        return meta[META_KEY]
    for c in grading.get("componentResults") or []:
        if isinstance(c, dict) and (found := _judgeaudit_meta(c)) is not None:
            return found
    return None


def _row(r: dict[str, Any], line: int, path: str, request_id: str, metric: str | None,
         scale: tuple[float, float]) -> dict[str, Any]:
    row: dict[str, Any] = {"request_id": request_id, "score": None, "label": None, "rationale": None,
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
        if row["raw"] is None:
            row["error"] = "no gradingResult and no output in the promptfoo result"
        # a test without assertions (the config ``requests export`` writes): the reply, read with the judge's
        # parser (``?template=``: the template's) as a raw reply of a replay file is
        return row
    own = _judgeaudit_meta(grading) if metric is None else None
    if own is not None and (own.get("error") is not None or own.get("parse_error") is not None):
        row["rationale"] = grading.get("reason") if isinstance(grading.get("reason"), str) else None
        if own.get("error") is not None:   # judgeaudit's assertion: the judge call failed
            row["error"] = f"judgeaudit assertion: the call failed: {own['error']}"
        return row                        # a reply that did not parse: no grade (a parse failure)
    if own is not None and own.get("scale") is not None and own.get("grade") is not None:
        # judgeaudit's assertion graded on its judge's own scale: the grade as it gave it
        row["score"], row["scale"] = float(own["grade"]), json.dumps(own["scale"], sort_keys=True)
        row["label"] = grading.get("pass") if isinstance(grading.get("pass"), bool) else None
        row["rationale"] = grading.get("reason") if isinstance(grading.get("reason"), str) else None
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
                   scale: tuple[float, float] = (0.0, 1.0)) -> dict[tuple[str, int], tuple[pd.DataFrame, Any]]:
    """One replay table per (provider, promptIdx) of a promptfoo output file, checked as a replay file is, with
    the scale its grades are on (judgeaudit's assertion's judge's; None: the judges' 1–9)."""
    results = read_results(path)
    if not results:
        raise InputError("the promptfoo output holds no results", path=path, field="results.results")
    numbered = list(enumerate(results, start=1))
    ids = request_ids(numbered, id_var)
    groups: dict[tuple[str, int], list[tuple[int, dict[str, Any]]]] = {}
    for line, r in numbered:
        groups.setdefault(_judge_key(r), []).append((line, r))
    tables = {}
    for key, members in groups.items():
        rows, lines, seen = [], [], {}
        for line, r in _order(members):
            ident = identity_of(r)
            row = _row(r, line, path, ids[ident], metric, scale)
            repeat = r.get("repeatIndex")
            given = _epoch_var(r) if _id_var(r, id_var) is not None else None
            counter = ident if given is None and _id_var(r, id_var) is None else ("id", row["request_id"])
            if isinstance(repeat, int) and not isinstance(repeat, bool) and repeat >= 0:
                row["epoch"] = repeat + (given or 0)
            elif given is not None:   # an exported request: its epoch is a var of the test
                row["epoch"] = given
            else:   # a repeated test: epochs 0, 1, … in promptfoo's run order
                row["epoch"] = seen.get(counter, 0)
            seen[counter] = row["epoch"] + 1
            rows.append(row)
            lines.append(line)
        df = pd.DataFrame(rows, columns=["request_id", "epoch", "score", "label", "rationale", "raw", "error",
                                         "scale"])
        df["label"] = df["label"].astype(object)
        df.attrs["lines"] = lines
        declared = df["scale"].dropna().unique()
        on = None
        if len(declared):
            graded = df["score"].notna()
            if len(declared) > 1 or df.loc[graded, "scale"].isna().any():
                row = int(((df["scale"] != declared[0]) & graded).to_numpy().nonzero()[0][0])
                raise InputError("judgeaudit's assertion graded this provider's results on more than one scale",
                                 path=path, line=lines[row], field="gradingResult.metadata")
            on = scale_of(json.loads(declared[0]))
        tables[key] = (normalise_replay_table(df.drop(columns="scale"), path, scale=on), on)
    return tables


def _judges(argument: str, family: str | None, spec_id: str | None, *, one: bool) -> list[Judge]:
    path, mapping = parse_spec(argument)
    if not path:
        raise InputError("replay:promptfoo needs a promptfoo output file: replay:promptfoo:<results.json>",
                         field="judge")
    check_options(mapping, path, _OPTIONS, "replay:promptfoo")
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
        table, on = tables[k]
        judge: ReplayJudge = replay_judge(table, f"{path}?judge={names[k]}", None, jid, family, on)
        use_template([judge], mapping.get("template"))
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
                help="a promptfoo eval's output: replay:promptfoo:<results.json>[?id=VAR&metric=NAME&scale=LO,HI&template=T]")


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
    scale = judge.scale
    lo, hi = (1.0, 9.0) if scale is None else (float(scale.min), float(scale.max))
    meta: dict[str, Any] = {"judge_id": judge.id, "call_key": verdict.call_key,
                            "scale": scale.to_dict() if scale is not None else None}
    if verdict.error is not None:
        return {"pass": False, "score": 0.0, "reason": f"judgeaudit {judge.id}: the call failed: {verdict.error}",
                "metadata": {META_KEY: {**meta, "error": verdict.error}}}
    if not verdict.parse_ok or verdict.score is None:
        why = (verdict.meta or {}).get("parse_error") or "no score"
        return {"pass": False, "score": 0.0, "reason": f"judgeaudit {judge.id}: the reply did not parse ({why})",
                "metadata": {META_KEY: {**meta, "parse_error": why}}}
    grade = float(verdict.score)
    on = "1–9" if scale is None else scale.label()
    reason = f"judgeaudit {judge.id}: grade {grade:.3g} on {on} (pass at ≥ {threshold:g})"
    if verdict.rationale:
        reason += f": {verdict.rationale}"
    return {"pass": grade >= threshold, "score": (grade - lo) / (hi - lo), "reason": reason,
            "metadata": {META_KEY: {**meta, "grade": grade}}}
