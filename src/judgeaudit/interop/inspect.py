"""Inspect AI interoperability, both directions (``pip install 'judgeaudit[inspect]'``).

**Import** — ``replay:inspect:<log>[?scorer=NAME&scale=LO,HI&higher=better|worse]``: an Inspect eval log (``.eval`` or
``.json``, read with ``inspect_ai.log.read_eval_log``) as a replay judge. Every sample of the log (one
per sample id and epoch) becomes one verdict row of the chosen scorer (``?scorer=NAME``; needed when the
log has several, or the CLI makes one judge per scorer):

* ``request_id`` = the sample id; ``epoch`` = Inspect's epoch − 1 (Inspect counts from 1, judgeaudit
  from 0); ``rationale`` = the score's explanation; ``raw`` = its answer.
* value → ``score`` on the scale the log declares or the user gives, never moved onto another: a score's
  ``metadata["judgeaudit"]["scale"]`` (written by the exported task of ``requests export`` — its template's
  scale and direction — and by the ``judgeaudit/judge`` scorer), else ``?scale=LO,HI&higher=better|worse``
  (or ``scale=pass_fail``), as a plain replay file declares it. A number is a grade on that scale as it
  stands (outside it: an error). Inspect's ``C``/``P``/``I``/``N`` (correct, partial, incorrect, no answer)
  and booleans are read as Inspect's own ``value_to_float`` reads them (C = 1, P = 0.5, I = N = 0, true = 1,
  false = 0); a scorer whose values are all C, I, N or booleans and that declares no scale is read on the
  pass/fail scale (C = pass). A number, or P, from a scorer that declares no scale is an error asking for
  ``?scale=``; a ``judgeaudit`` score without a declared scale (an older log) is on the judges' 1–9.
* pairwise: a value or an answer ``A``, ``B`` or ``tie`` (any case) → ``choice``.
* nothing is dropped: a sample that errored (``sample.error``, even when ``inspect score`` scored it again
  afterwards) or has no score from the scorer gets a verdict with that ``error`` (a failed call); a score Inspect left unscored (its NaN sentinel) is a
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
from judgeaudit.judges.replay import (ReplayJudge, check_options, normalise_replay_table, parse_spec,
                                     register_format, replay_judge, replay_scale)
from judgeaudit.judges.scale import OVERREACH_SCALE, Scale
from judgeaudit.records import JudgeRequest, Verdict

EXTRA = "pip install 'judgeaudit[inspect]'"
META_KEY = "judgeaudit"
SCORING_FAILED = "scoring_failed"
GRADER_FAILED = "grader_failed"
UNIT = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
"""Inspect's categorical values on its 0–1 scale (``inspect_ai.scorer.value_to_float``)."""
CHOICES = {"a": "A", "b": "B", "tie": "tie"}
EVIDENCE = ("input", "target", "none")
_OPTIONS = ("scorer", "scale", "higher")


def require_inspect() -> Any:
    """The ``inspect_ai`` package, or an InputError naming the extra that installs it."""
    try:
        import inspect_ai
    except ImportError:
        raise InputError(f"Inspect AI interoperability needs the inspect-ai package ({EXTRA})",
                         field="judge") from None
    return inspect_ai


def scale_of(d: Any) -> Scale | None:
    """The ``Scale`` a score's metadata records (``Scale.to_dict``), None when it records none."""
    if not isinstance(d, dict):
        return None
    if d.get("kind") == "pass_fail" or d.get("pass_fail"):
        return Scale.passfail()
    return Scale(min=int(d["min"]), max=int(d["max"]), higher=d.get("higher", "better"))


def declared(scale: Scale | None) -> dict[str, Any] | None:
    """A scale as a score's metadata records it (None: none)."""
    return None if scale is None else scale.to_dict()


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


def _row(sample: Any, scorer: str, path: str, line: int) -> dict[str, Any]:
    """One sample's verdict row for ``scorer`` (the columns of a replay table), its value as the log holds it
    (categorical values as Inspect's 0–1 floats)."""
    row: dict[str, Any] = {"request_id": sample.id, "epoch": sample.epoch - 1, "score": None, "choice": None,
                           "rationale": None, "raw": None, "error": None}
    score = (sample.scores or {}).get(scorer)
    if sample.error is not None:   # a failed sample, even when ``inspect score`` scored it again afterwards
        row["error"] = f"Inspect sample error: {_first_line(sample.error.message)}"
        if score is not None:
            row["rationale"], row["raw"] = score.explanation, score.answer
        return row
    if score is None:
        row["error"] = f"no {scorer!r} score in the Inspect log"
        return row
    row["rationale"], row["raw"] = score.explanation, score.answer
    own = (score.metadata or {}).get(META_KEY)
    if isinstance(own, dict) and own.get("form") not in (None, "graded", "pairwise") and score.answer is not None:
        return row   # a world verdict of the exported task: its reply, read again with the world parser

    def bad(msg: str) -> InputError:
        return InputError(f"sample {sample.id!r} (epoch {sample.epoch}): {msg}", path=path, line=line,
                          field="value")

    value = score.value
    if isinstance(value, str) and value.strip().lower() in CHOICES:
        row["choice"] = CHOICES[value.strip().lower()]
    elif isinstance(value, str) and value in UNIT:
        row["score"], row["kind"] = UNIT[value], value
    elif isinstance(value, bool):
        row["score"], row["kind"] = float(value), "bool"
    elif isinstance(value, (int, float, str)):
        try:
            number = float(value)
        except ValueError:
            raise bad(f"score value {value!r} is not C, I, P, N, A, B, tie or a number") from None
        if math.isnan(number):   # Inspect's unscored sentinel: no grade (a failed call when the scorer failed)
            if score.reason == SCORING_FAILED:
                row["error"] = f"{SCORING_FAILED}: {score.explanation or 'no explanation'}"
            return row
        row["score"], row["kind"] = number, "number"
    else:
        raise bad(f"score value {value!r} is a list or mapping, not one verdict")
    if row["choice"] is None and isinstance(score.answer, str) and score.answer.strip().lower() in CHOICES:
        row["choice"] = CHOICES[score.answer.strip().lower()]
    return row


def log_scale(log: Any, path: str, scorer: str, given: Scale | None) -> Scale | None:
    """The scale ``scorer``'s values are on: the one its scores' metadata declare, else ``given`` (the
    spec's ``?scale=``); a spec's scale that contradicts the log's is an error. None: not declared."""
    found = []
    for line, s in enumerate(log.samples or [], start=1):
        sc = (s.scores or {}).get(scorer)
        meta = ((sc.metadata or {}).get(META_KEY) if sc is not None else None) or {}
        if isinstance(meta, dict) and meta.get("scale") is not None:
            try:
                found.append((line, scale_of(meta["scale"])))
            except (KeyError, ValueError, TypeError) as e:
                raise InputError(f"the score's metadata scale is not a scale ({e})", path=path, line=line,
                                 field="metadata.judgeaudit.scale") from None
    scales = list(dict.fromkeys(sc for _, sc in found))
    if len(scales) > 1:
        line = next(n for n, sc in found if sc != scales[0])
        raise InputError(f"scorer {scorer!r} declares two scales ({scales[0].label()}, {scales[1].label()})",
                         path=path, line=line, field="metadata.judgeaudit.scale")
    if scales and given is not None and given != scales[0]:
        raise InputError(f"the log declares the {scales[0].label()} scale (a higher grade is {scales[0].higher}) "
                         f"for scorer {scorer!r}; the spec gives {given.label()} ({given.higher})", path=path,
                         field="scale")
    return scales[0] if scales else given


def log_table(log: Any, path: str, scorer: str, scale: Scale | None = None) -> tuple[pd.DataFrame, Scale | None]:
    """The replay table of one scorer of a log (one row per sample, checked as any replay file is) and the
    scale its scores are on (``scale``: what the spec gives; see the module docstring)."""
    samples = log.samples or []
    rows = [_row(s, scorer, path, line) for line, s in enumerate(samples, start=1)]
    df = pd.DataFrame(rows, columns=["request_id", "epoch", "score", "choice", "rationale", "raw", "error", "kind"])
    df.attrs["lines"] = list(range(1, len(rows) + 1))
    metas = [((s.scores or {})[scorer].metadata or {}).get(META_KEY) for s in samples if (s.scores or {}).get(scorer)]
    meta = next((m for m in metas if isinstance(m, dict)), {})   # the judge a judgeaudit scorer recorded
    scale = log_scale(log, path, scorer, scale)
    kinds = df["kind"].dropna()
    if scale is None and len(kinds):
        if meta:   # judgeaudit's own scorer in a log that predates the declared scale: the judges' 1–9
            scale = None
        elif kinds.isin(["C", "I", "N", "bool"]).all():
            scale = Scale.passfail()
        else:
            row = int(df.index[df["kind"].isin(["P", "number"])][0])
            raise InputError(f"scorer {scorer!r} gives {float(df['score'].iloc[row])!r} for sample "
                             f"{str(df['request_id'].iloc[row])!r} and the log declares no scale: give "
                             "?scale=LO,HI&higher=better|worse (or scale=pass_fail)", path=path, line=row + 1,
                             field="scale")
    df = df.drop(columns="kind")
    if meta.get("model") is not None:
        df["model"] = str(meta["model"])
    if meta.get("family") is not None:
        df["family"] = str(meta["family"])
    return normalise_replay_table(df, path, scale=scale), scale


def log_template(log: Any, path: str, scorer: str) -> Any:
    """The judge template the exported task asked and read ``scorer``'s samples with (its scores' metadata
    ``judgeaudit.definition``, checked against the ``judgeaudit.template`` reference it records), or None. A
    definition is someone else's text: it is validated as a template file is (sandboxed prompt, bounded
    parser) before use; two templates in one scorer, or a definition that is not the one referenced, is an
    error naming the sample."""
    from judgeaudit.judges.templates import JudgeTemplate

    found = None
    for line, sample in enumerate(log.samples or [], 1):
        score = (sample.scores or {}).get(scorer)
        meta = (score.metadata or {}).get(META_KEY) if score is not None else None
        if not isinstance(meta, dict) or meta.get("definition") is None:
            continue
        try:
            template = JudgeTemplate.model_validate(meta["definition"])
        except Exception as e:   # pydantic's ValidationError or the template's own InputError
            raise InputError(f"the score's template definition is not a judge template ({_first_line(str(e))})",
                             path=path, line=line, field="metadata.judgeaudit.definition") from None
        if meta.get("template") != template.ref():
            raise InputError(f"the score's template definition is not the template it references "
                             f"({meta.get('template')})", path=path, line=line, field="metadata.judgeaudit.template")
        if found is not None and found.ref() != template.ref():
            raise InputError(f"scorer {scorer!r} read its samples with two templates ({found.name}, {template.name})",
                             path=path, line=line, field="metadata.judgeaudit.template")
        found = template
    return found


def log_counts(df: pd.DataFrame) -> LogCounts:
    failed = df["error"].notna()
    valued = (df["score"].notna() | df["choice"].notna()) & ~failed
    return LogCounts(samples=len(df), scored=int(valued.sum()), unscored=int((~valued & ~failed).sum()),
                     errors=int(failed.sum()))


def _judges(argument: str, family: str | None, spec_id: str | None, *, one: bool) -> list[Judge]:
    path, mapping = parse_spec(argument)
    if not path:
        raise InputError("replay:inspect needs an Inspect eval log: replay:inspect:<log>", field="judge")
    check_options(mapping, path, _OPTIONS, "replay:inspect")
    scale = replay_scale(mapping, path)
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
        df, on = log_table(log, path, name, scale)
        if len(chosen) == 1:
            jid = spec_id or f"replay:inspect:{argument}"
        else:
            jid = f"replay:inspect:{path}?{urlencode({**mapping, 'scorer': name})}"
        # the scorer is part of what is replayed: two scorers of one log are two instruments
        judge = replay_judge(df, f"{path}?scorer={name}", None, jid, family, on)
        if (template := log_template(log, path, name)) is not None:
            judge.use_template(template)   # its replies are read again with the template that asked them
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


def score_of(verdict: Verdict, scale: Scale | None = None) -> Any:
    """The Inspect ``Score`` of a verdict (unscored, with a reason, when it has no score); its metadata
    declare the scale of the value (``scale``, the judge's; None: the judges' 1–9)."""
    require_inspect()
    from inspect_ai.scorer import Score

    meta = {META_KEY: {"judge_id": verdict.judge_id, "call_key": verdict.call_key, "model": verdict.model,
                       "family": verdict.family, "score_source": verdict.score_source,
                       "parse_ok": verdict.parse_ok, "request_id": verdict.request_id, "epoch": verdict.epoch,
                       "scale": declared(scale or OVERREACH_SCALE)}}
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
        return score_of(verdict, instrument.scale)

    return score


register_format("inspect", judges=inspect_judges, judge=inspect_judge,
                help="an Inspect AI eval log: replay:inspect:<log>[?scorer=NAME&scale=LO,HI&higher=better|worse]")


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
