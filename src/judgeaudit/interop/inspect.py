"""Inspect AI interoperability, both directions (``pip install 'judgeaudit[inspect]'``).

**Import** — ``replay:inspect:<log>[?scorer=NAME&scale=LO,HI]``: an Inspect eval log (``.eval`` or
``.json``, read with ``inspect_ai.log.read_eval_log``) as a replay judge. Every sample of the log (one
per sample id and epoch) becomes one verdict row of the chosen scorer (``?scorer=NAME``; needed when the
log has several, or the CLI makes one judge per scorer):

* ``request_id`` = the sample id; ``epoch`` = Inspect's epoch − 1 (Inspect counts from 1, judgeaudit
  from 0); ``rationale`` = the score's explanation; ``raw`` = its answer.
* value → ``score`` on the judges' 1–9 scale: Inspect's ``C``/``P``/``I``/``N`` (correct, partial,
  incorrect, no answer) and booleans are read as Inspect's own ``value_to_float`` reads them
  (C = 1, P = 0.5, I = N = 0, true = 1, false = 0) and mapped by 1 + 8·v: C → 9, P → 5, I → 1, N → 1.
  A number is a grade on the 1–9 scale as it stands, or rescaled linearly from ``?scale=LO,HI``
  (``?scale=0,1``: 0 → 1, 1 → 9); a number outside the scale is an error.
* pairwise: a value or an answer ``A``, ``B`` or ``tie`` (any case) → ``choice``.
* nothing is dropped: a sample that errored (``sample.error``) or has no score from the scorer gets a
  verdict with that ``error`` (a failed call); a score Inspect left unscored (its NaN sentinel) is a
  parse failure, or a failed call when its reason is ``scoring_failed``. The judge's ``log_counts``
  counts them, and every run reports them with the other failed calls and parse failures.
* a list or mapping value, or text that is none of the above, is an error naming the log, the sample
  (its 1-based position in the log as the line) and the field.

**Export** — :func:`judge_scorer`: any judgeaudit judge as an Inspect scorer (registered as
``judgeaudit/judge``, metrics mean and stderr; on Inspect's command line
``inspect score LOG --scorer judgeaudit/judge -S judge=reference:length``). For each sample it asks the judge
through the executor (retries, timeouts) with a graded ``JudgeRequest``: ``request_id`` = sample id, ``epoch`` = Inspect's
epoch − 1, ``text`` = the model's output, ``question`` = the input, ``reference`` = the target, and
``evidence`` = the input (``evidence="target"`` or ``"none"`` to change it). The Score's value is the
verdict's score, ``explanation`` its rationale, ``metadata["judgeaudit"]`` the judge id, call key,
model, family, score source and parse flag; a failed call is ``Score.unscored(reason="scoring_failed")``
and a reply with no score ``Score.unscored(reason="grader_failed")``, so the import above reads every
score back as the verdict it was.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pandas as pd

from judgeaudit.errors import InputError
from judgeaudit.judges.base import Judge, make_judge
from judgeaudit.judges.replay import (ReplayJudge, _judge_of, normalise_replay_table, parse_scale, parse_spec,
                                     register_format)
from judgeaudit.records import JudgeRequest, Verdict

EXTRA = "pip install 'judgeaudit[inspect]'"
META_KEY = "judgeaudit"
SCORING_FAILED = "scoring_failed"
GRADER_FAILED = "grader_failed"
UNIT = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
"""Inspect's categorical values on its 0–1 scale (``inspect_ai.scorer.value_to_float``)."""
CHOICES = {"a": "A", "b": "B", "tie": "tie"}
EVIDENCE = ("input", "target", "none")
_OPTIONS = ("scorer", "scale")


def require_inspect() -> Any:
    """The ``inspect_ai`` package, or an InputError naming the extra that installs it."""
    try:
        import inspect_ai
    except ImportError:
        raise InputError(f"Inspect AI interoperability needs the inspect-ai package ({EXTRA})",
                         field="judge") from None
    return inspect_ai


def unit_to_grade(v: float) -> float:
    """A value on Inspect's 0–1 scale on the judges' 1–9 scale."""
    return 1.0 + 8.0 * v


# ---------------------------------------------------------------------------------------------- import


@dataclass(frozen=True)
class LogCounts:
    """What one scorer's column of a log holds: samples (sample × epoch), those with a score or choice,
    those left unscored (parse failures) and those that failed (errored samples, missing scores)."""

    samples: int
    scored: int
    unscored: int
    errors: int


def read_log(path: str) -> Any:
    """The eval log at ``path`` (``.eval`` or ``.json``), samples included."""
    require_inspect()
    from inspect_ai.log import read_eval_log

    if not Path(path).is_file():
        raise InputError("file not found", path=path)
    try:
        return read_eval_log(path)
    except Exception as e:  # a zip, JSON or schema error from Inspect
        raise InputError(f"cannot read the Inspect eval log ({type(e).__name__}: {e})", path=path) from None


def scorer_names(log: Any) -> list[str]:
    """The scorers of a log: those its header names, then any other a sample's scores hold."""
    names = [s.name for s in (log.eval.scorers or [])]
    for sample in log.samples or []:
        names += list(sample.scores or {})
    return list(dict.fromkeys(names))


def _first_line(text: str, limit: int = 300) -> str:
    line = (text.strip().splitlines() or [""])[0]
    return line if len(line) <= limit else line[:limit] + "…"


def _row(sample: Any, scorer: str, scale: tuple[float, float] | None, path: str, line: int) -> dict[str, Any]:
    """One sample's verdict row for ``scorer`` (the columns of a replay table)."""
    row: dict[str, Any] = {"request_id": sample.id, "epoch": sample.epoch - 1, "score": None, "choice": None,
                           "rationale": None, "raw": None, "error": None}
    score = (sample.scores or {}).get(scorer)
    if score is None:
        row["error"] = (f"Inspect sample error: {_first_line(sample.error.message)}" if sample.error is not None
                        else f"no {scorer!r} score in the Inspect log")
        return row
    row["rationale"], row["raw"] = score.explanation, score.answer

    def bad(msg: str) -> InputError:
        return InputError(f"sample {sample.id!r} (epoch {sample.epoch}): {msg}", path=path, line=line,
                          field="value")

    value = score.value
    if isinstance(value, str) and value.strip().lower() in CHOICES:
        row["choice"] = CHOICES[value.strip().lower()]
    elif isinstance(value, str) and value in UNIT:
        row["score"] = unit_to_grade(UNIT[value])
    elif isinstance(value, bool):
        row["score"] = unit_to_grade(float(value))
    elif isinstance(value, (int, float, str)):
        try:
            number = float(value)
        except ValueError:
            raise bad(f"score value {value!r} is not C, I, P, N, A, B, tie or a number") from None
        if math.isnan(number):   # Inspect's unscored sentinel: no grade (a failed call when the scorer failed)
            if score.reason == SCORING_FAILED:
                row["error"] = f"{SCORING_FAILED}: {score.explanation or 'no explanation'}"
            return row
        if scale is not None:
            lo, hi = scale
            if not lo <= number <= hi:
                raise bad(f"score value {number!r} is outside the given scale {lo:g}–{hi:g}")
            number = 1.0 + 8.0 * (number - lo) / (hi - lo)
        row["score"] = number
    else:
        raise bad(f"score value {value!r} is a list or mapping, not one verdict")
    if row["choice"] is None and isinstance(score.answer, str) and score.answer.strip().lower() in CHOICES:
        row["choice"] = CHOICES[score.answer.strip().lower()]
    return row


def log_table(log: Any, path: str, scorer: str, scale: tuple[float, float] | None = None) -> pd.DataFrame:
    """The replay table of one scorer of a log: one row per sample (checked as any replay file is)."""
    samples = log.samples or []
    rows = [_row(s, scorer, scale, path, line) for line, s in enumerate(samples, start=1)]
    df = pd.DataFrame(rows, columns=["request_id", "epoch", "score", "choice", "rationale", "raw", "error"])
    df.attrs["lines"] = list(range(1, len(rows) + 1))
    metas = [((s.scores or {})[scorer].metadata or {}).get(META_KEY) for s in samples if (s.scores or {}).get(scorer)]
    meta = next((m for m in metas if isinstance(m, dict)), {})   # the judge a judgeaudit scorer recorded
    if meta.get("model") is not None:
        df["model"] = str(meta["model"])
    if meta.get("family") is not None:
        df["family"] = str(meta["family"])
    try:
        return normalise_replay_table(df, path)
    except InputError as e:
        if e.field != "score" or scale is not None:
            raise
        raise InputError(f"{e.message} (a log graded on another range: ?scale=LO,HI)", path=e.path, line=e.line,
                         field=e.field) from None


def log_counts(df: pd.DataFrame) -> LogCounts:
    failed = df["error"].notna()
    valued = (df["score"].notna() | df["choice"].notna()) & ~failed
    return LogCounts(samples=len(df), scored=int(valued.sum()), unscored=int((~valued & ~failed).sum()),
                     errors=int(failed.sum()))


def _judges(argument: str, family: str | None, spec_id: str | None, *, one: bool) -> list[Judge]:
    path, mapping = parse_spec(argument)
    if not path:
        raise InputError("replay:inspect needs an Inspect eval log: replay:inspect:<log>", field="judge")
    unknown = sorted(set(mapping) - set(_OPTIONS))
    if unknown:
        raise InputError(f"unknown option {unknown[0]!r} for replay:inspect (options: {', '.join(_OPTIONS)})",
                         path=path, field=unknown[0])
    scale = parse_scale(mapping.get("scale"), path)
    log = read_log(path)
    if not log.samples:
        raise InputError("the Inspect eval log holds no samples (was it written with --no-log-samples?)", path=path,
                         field="samples")
    names = scorer_names(log)
    if not names:
        raise InputError("the Inspect eval log holds no scores", path=path, field="scores")
    wanted = mapping.get("scorer")
    if wanted is not None and wanted not in names:
        raise InputError(f"no scorer {wanted!r} in the log (scorers: {', '.join(names)})", path=path, field="scorer")
    if one and wanted is None and len(names) > 1:
        raise InputError(f"the log holds {len(names)} scorers ({', '.join(names)}); pick one with ?scorer=NAME",
                         path=path, field="scorer")
    chosen = [wanted] if wanted is not None else names
    judges: list[Judge] = []
    for name in chosen:
        df = log_table(log, path, name, scale)
        if len(chosen) == 1:
            jid = spec_id or f"replay:inspect:{argument}"
        else:
            jid = f"replay:inspect:{path}?{urlencode({**mapping, 'scorer': name})}"
        # the scorer is part of what is replayed: two scorers of one log are two instruments
        judge = _judge_of(df, f"{path}?scorer={name}", None, jid, family)
        judge.log_counts = log_counts(df)
        judges.append(judge)
    return judges


def inspect_judges(argument: str) -> list[Judge]:
    """Every scorer of a log as a judge (the CLI's ``replay:inspect:<log>``), or the one ``?scorer=`` names."""
    return _judges(argument, None, None, one=False)


def inspect_judge(argument: str, options: dict[str, Any]) -> ReplayJudge:
    """The judge ``make_judge("replay:inspect:<argument>")`` builds: the log's single scorer or the one
    ``?scorer=`` names."""
    judge, = _judges(argument, options.get("family"), options["id"], one=True)
    return judge


# ---------------------------------------------------------------------------------------------- export


def request_of(state: Any, target: Any, *, evidence: str = "input", criterion: str | None = None) -> JudgeRequest:
    """The graded request for one Inspect sample (``TaskState`` and ``Target``)."""
    given = {"input": state.input_text, "target": target.text or None, "none": None}
    return JudgeRequest(request_id=str(state.sample_id), form="graded", text=state.output.completion,
                        question=state.input_text, reference=target.text or None, evidence=given[evidence],
                        criterion=criterion, epoch=state.epoch - 1)


def score_of(verdict: Verdict) -> Any:
    """The Inspect ``Score`` of a verdict (unscored, with a reason, when it has no score)."""
    require_inspect()
    from inspect_ai.scorer import Score

    meta = {META_KEY: {"judge_id": verdict.judge_id, "call_key": verdict.call_key, "model": verdict.model,
                       "family": verdict.family, "score_source": verdict.score_source,
                       "parse_ok": verdict.parse_ok, "request_id": verdict.request_id, "epoch": verdict.epoch}}
    if verdict.error is not None:
        return Score.unscored(reason=SCORING_FAILED, explanation=verdict.error, metadata=meta)
    if verdict.score is None:
        return Score.unscored(reason=GRADER_FAILED, explanation=verdict.rationale, metadata=meta)
    return Score(value=verdict.score, explanation=verdict.rationale, metadata=meta)


def _judge(judge: str, evidence: str = "input", criterion: str | None = None, **options: Any) -> Any:
    """The registered scorer's factory (``judge``, not ``spec``: Inspect's ``scorer_from_spec`` takes ``spec``)."""
    from judgeaudit.runtime.executor import arun

    if evidence not in EVIDENCE:
        raise InputError(f"evidence must be one of {', '.join(EVIDENCE)}, got {evidence!r}", field="evidence")
    instrument = make_judge(judge, **options)

    async def score(state: Any, target: Any) -> Any:
        request = request_of(state, target, evidence=evidence, criterion=criterion)
        verdict, = await arun(instrument, [request], progress=False)
        return score_of(verdict)

    return score


register_format("inspect", judges=inspect_judges, judge=inspect_judge,
                help="an Inspect AI eval log: replay:inspect:<log>[?scorer=NAME&scale=LO,HI]")


@functools.cache
def _registered() -> Any:
    require_inspect()
    from inspect_ai.scorer import mean, scorer, stderr

    return scorer(metrics=[mean(), stderr()], name="judge")(_judge)


def judge_scorer(spec: str, *, evidence: str = "input", criterion: str | None = None, **options: Any) -> Any:
    """An Inspect scorer that grades every sample with the judgeaudit judge ``spec`` (e.g.
    ``judge_scorer("reference:length")`` or ``judge_scorer("api:openai/gpt-4o-mini", family="openai")``);
    ``options`` go to :func:`judgeaudit.judges.make_judge`."""
    return _registered()(judge=spec, evidence=evidence, criterion=criterion, **options)
