"""``python:package.module:function`` — a user's own code as a judge.

The callable (a plain function, an ``async def`` function, or any attribute path such as
``module:Class.method`` that names a callable) takes one :class:`~judgeaudit.records.JudgeRequest`
and returns its verdict. The request's fields:

* ``request_id``, ``form`` (``graded``, ``pairwise``, ``defects``, or a world form ``label``,
  ``sentences``, ``typed``, ``score``) and ``epoch`` (the vote index);
* graded / defects / world forms: ``text`` (the judged text), ``evidence`` (its source or world;
  ``None`` in a blind world arm), ``criterion``, ``question``, ``reference``, ``units`` (the
  sentences or allowed ids a ``sentences``/``typed`` report labels);
* pairwise: ``prompt``, ``response_a``, ``response_b`` (``criterion`` when the set gives one);
* ``meta``: judgeaudit's own bookkeeping (roles, arm names, orders; for world runs the gold, which a
  judge under audit must not read). ``meta`` is not part of the call key.

``judgeaudit.judges.elicit.render(request)`` gives the prompt judgeaudit's own templates send, for a
callable that calls its own model with it.

What it may return, by form:

* graded: a number on the 1–9 scale (an ``int`` or ``float``, not a ``bool``), or on the scale the
  judge declares: ``?scale=1,10`` on the spec (``&higher=better``, the default, or ``worse``;
  ``scale=pass_fail``: 1/0 or True/False), or a ``judge_scale`` attribute on the callable (``"1,10"``,
  ``(1, 10)``, ``"pass_fail"``, ``{"min": 1, "max": 5, "higher": "better"}``). The scale enters the
  call key, and the validity analysis reads the judge's frontier on it;
* pairwise: ``"A"``, ``"B"`` or ``"tie"``;
* defects: a list of ``{"quote": …, "reason": …}`` (``"span"`` is read as the quote, ``"citation"``
  is optional);
* world forms: the world reply's object (``{"defective": true}``, ``{"labels": […]}``,
  ``{"defect_ids": […]}``, ``{"score": 1..5}``, ``{"defects": [...]}``), or a bare ``bool`` for
  ``label``;
* or a dict with those keys (``score``, ``choice``, ``defects``, the world keys) and optionally
  ``raw`` (the reply text to keep) and ``rationale``.

Anything else is a parse failure (``parse_ok=False`` with the reason in ``meta['parse_error']``),
counted with every other parse failure; an exception the callable raises is a failed call, stored
with its error and retried on the next run.

Spec options: ``?scale=LO,HI&higher=…`` (above), ``?version=V`` (the user's version of the code: it enters the call key with the
function's qualified name, so changing it re-calls everything; without it the version is the hash
of the function's source, ``src-<hash>``), ``?family=F`` (the model family the code wraps, for the
disjointness rules), ``?concurrency=N`` (calls at once; default 8). A sync callable runs in a worker
thread, so it must be thread-safe (``?concurrency=1`` otherwise). Under ``--backend ray`` each worker
rebuilds the judge from its spec string, so the module must be importable there (on ``PYTHONPATH``
or in the Ray ``runtime_env``).

An import error or a missing attribute fails when the judge is built, before any call, in one line
naming the spec. A spec a file holds (an experiment file's judge) runs only when the command line says
``--allow-code``; typed on the command line, it is the user's consent (``judgeaudit.consent``).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import inspect
import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from judgeaudit.consent import require as require_consent
from judgeaudit.errors import InputError
from judgeaudit.families import parse_family
from judgeaudit.judges.base import Judge, JudgeSpec, register
from judgeaudit.judges.elicit import ParseResult, is_world, parse_request, world_fields
from judgeaudit.judges.replies import defect_list
from judgeaudit.judges.scale import OVERREACH_SCALE, Scale, declared_scale
from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.specs import split

_OPTIONS = ("version", "family", "concurrency", "scale", "higher")
#: the attribute a callable may carry to declare its scale (as ``?scale=`` does)
SCALE_ATTRIBUTE = "judge_scale"
_WORLD_KEYS = {"label": "defective", "sentences": "labels", "typed": "defect_ids", "score": "score",
               "defects": "defects"}
#: Verdict-field spellings of the world keys, read as the world parser's keys
_WORLD_ALIASES = {"label": "defective", "unit_labels": "labels"}
_RENDER_FIELDS = ("form", "request_id", "text", "evidence", "criterion", "question", "reference", "units",
                  "prompt", "response_a", "response_b")


def load_callable(target: str, *, spec: str) -> tuple[Callable[..., Any], str]:
    """The callable ``module:attr.path`` names and its qualified name ``module:qualname``.

    Raises ``InputError`` (one line naming ``spec``) when the module does not import, the attribute is
    missing or the object is not callable, and, before the import, when the command line did not consent to
    the code (``judgeaudit.consent``: a spec a file named, without ``--allow-code``).
    """
    module_name, sep, attr_path = target.partition(":")
    if not sep or not module_name or not attr_path:
        raise InputError(f"judge spec {spec!r}: a python judge is python:package.module:function", field="judge")
    require_consent(f"python:{target}")
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # noqa: BLE001 - any import failure (ImportError, SyntaxError, ...) is one line
        raise InputError(f"judge spec {spec!r}: cannot import module {module_name!r} "
                         f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})", field="judge") from None
    obj: Any = module
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            raise InputError(f"judge spec {spec!r}: module {module_name!r} has no attribute {attr_path!r}",
                             field="judge")
        obj = getattr(obj, part)
    if not callable(obj):
        raise InputError(f"judge spec {spec!r}: {module_name}:{attr_path} is a {type(obj).__name__}, not a callable",
                         field="judge")
    qualname = getattr(obj, "__qualname__", attr_path)
    return obj, f"{getattr(obj, '__module__', None) or module_name}:{qualname}"


def source_version(fn: Callable[..., Any]) -> str:
    """``src-<hash>`` of the callable's source text (the version when the spec gives none)."""
    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError):
        text = repr(getattr(fn, "__code__", fn))
    return "src-" + hashlib.sha256(text.encode()).hexdigest()[:12]


def _plain(value: Any) -> Any:
    """``value`` with numpy scalars as the Python scalars they hold (``numpy.int64`` an int, ``numpy.float64`` a
    float, ``numpy.bool_`` a bool, ``numpy.str_`` a str), in a returned dict's values and list items too."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '…' if len(text) > 60 else text}"


def read_return(request: JudgeRequest, value: Any, scale: Scale = OVERREACH_SCALE) -> tuple[ParseResult, dict[str, Any]]:
    """What a callable returned, read for ``request``'s form (a graded score on ``scale``): the parse result
    and the extra Verdict fields it sets (``raw``, ``rationale``, the graded ``score``). Numpy scalars are read
    as the Python numbers and bools they hold."""
    value = _plain(value)
    extra: dict[str, Any] = {}
    if isinstance(value, dict):
        if value.get("raw") is not None:
            extra["raw"] = str(value["raw"])
        if value.get("rationale") is not None:
            extra["rationale"] = str(value["rationale"])
    if is_world(request):
        return _read_world(request, value), extra
    form = request.form
    if form == "graded":
        score = value.get("score") if isinstance(value, dict) else value
        number = float(score) if scale.pass_fail and isinstance(score, bool) else _number(score)
        if number is None:
            what = "no 'score'" if isinstance(value, dict) and "score" not in value else _describe(score)
            return ParseResult(ok=False, error=f"a graded request needs a number, got {what}"), extra
        if not math.isfinite(number) or not scale.min <= number <= scale.max:
            where = "1–9 scale" if scale == OVERREACH_SCALE else f"declared {scale.label()} scale"
            return ParseResult(ok=False, error=f"score {number!r} is outside the {where}"), extra
        if scale.pass_fail and number not in (0.0, 1.0):
            return ParseResult(ok=False, error=f"score {number!r} is neither pass (1) nor fail (0)"), extra
        return ParseResult(ok=True, score=number), extra
    if form == "pairwise":
        choice = value.get("choice") if isinstance(value, dict) else value
        if choice not in ("A", "B", "tie"):
            what = "no 'choice'" if isinstance(value, dict) and "choice" not in value else _describe(choice)
            return ParseResult(ok=False, error=f"a pairwise request needs 'A', 'B' or 'tie', got {what}"), extra
        return ParseResult(ok=True, choice=choice, rationale=extra.get("rationale")), extra
    if form == "defects":
        items = value.get("defects") if isinstance(value, dict) else value
        if not isinstance(items, list):
            what = "no 'defects'" if isinstance(value, dict) and "defects" not in value else _describe(items)
            return ParseResult(ok=False, error=f"a defects request needs a list of {{quote, reason}}, got {what}"), extra
        defects = defect_list(items)
        if isinstance(defects, str):
            return ParseResult(ok=False, error=defects), extra
        return ParseResult(ok=True, defects=defects), extra
    return ParseResult(ok=False, error=f"a python judge has no {form!r} form"), extra


def _read_world(request: JudgeRequest, value: Any) -> ParseResult:
    """A world verdict through the world parser (the same schema as a model's reply)."""
    key = _WORLD_KEYS[request.form]
    if request.form == "label" and isinstance(value, bool):
        value = {key: value}
    if isinstance(value, dict):
        obj = {_WORLD_ALIASES.get(k, k): v for k, v in value.items() if k not in ("raw", "rationale")}
        if request.form == "score" and isinstance(obj.get("score"), float) and obj["score"].is_integer():
            obj["score"] = int(obj["score"])
        if key in obj:
            try:
                return parse_request(request, json.dumps({key: obj[key]}))
            except TypeError:
                pass
    return ParseResult(ok=False, error=f"a world {request.form!r} request needs {{{key!r}: …}}, got {_describe(value)}")


class JudgeExited(RuntimeError):
    """A python judge's callable called ``sys.exit``: that call failed (the run goes on)."""


class PythonJudge(Judge):
    """A judge that is a user's Python callable, rebuilt from its spec string wherever it runs."""

    def __init__(self, spec: JudgeSpec, fn: Callable[..., Any], scale: Scale | None = None):
        super().__init__(spec)
        self.fn = fn
        self.declared = scale
        self.max_concurrency = int(spec.options.get("concurrency", 8))
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))

    @property
    def provider(self) -> str:
        return f"python:{self.spec.model}"

    @property
    def scale(self) -> Scale | None:
        return self.declared

    def render(self, request: JudgeRequest) -> str:
        """The request's fields (not its ``meta``) as canonical JSON: what the call key covers."""
        return json.dumps({f: getattr(request, f) for f in _RENDER_FIELDS}, sort_keys=True, ensure_ascii=False)

    async def _call(self, request: JudgeRequest) -> Any:
        """What the callable returns for ``request``. Its ``sys.exit`` is a failed call (``JudgeExited``),
        never the end of the run: the exit is the judge's, not the user's."""
        try:
            if self.is_async:
                return await self.fn(request)
            value = await asyncio.to_thread(self.fn, request)
            return await value if inspect.isawaitable(value) else value
        except SystemExit as e:
            raise JudgeExited(f"the python judge {self.spec.model} raised SystemExit({e.code!r}) (it called "
                              "sys.exit): a failed call, not the end of the run") from None

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        key = self.key(request)
        value = _plain(await self._call(request))
        parsed, extra = read_return(request, value, self.declared or OVERREACH_SCALE)
        if "raw" not in extra:
            extra["raw"] = json.dumps(value, default=str, ensure_ascii=False)
        fields: dict[str, Any] = dict(parse_ok=parsed.ok, choice=parsed.choice, defects=parsed.defects,
                                      provider="python", cost_usd=0.0, **extra)
        if parsed.rationale is not None:
            fields["rationale"] = parsed.rationale
        if is_world(request):
            fields.update(world_fields(request, parsed))
        elif request.form == "graded":
            fields.update(score=parsed.score, score_source="parsed" if parsed.ok else None)
        if not parsed.ok:
            fields["meta"] = {"parse_error": parsed.error}
        return self.make_verdict(request, call_key=key, **fields)


@register("python", "a Python callable: python:package.module:function[?version=V&family=F] "
                    "(sync or async; returns a score, a choice or defects)")
def _make(argument: str, options: dict[str, Any]) -> Judge:
    spec_string = f"python:{argument}"
    target, opts = split(argument, field="judge")
    unknown = sorted(set(opts) - set(_OPTIONS))
    if unknown:
        raise InputError(f"judge spec {spec_string!r}: unknown option(s) {', '.join(unknown)}; "
                         f"a python judge reads ?{'&'.join(o + '=…' for o in _OPTIONS)}", field="judge")
    fn, qualname = load_callable(target, spec=spec_string)
    version = opts.get("version") or options.get("version")
    if version is not None and not str(version).strip():
        raise InputError(f"judge spec {spec_string!r}: version= is empty", field="judge")
    concurrency = opts.get("concurrency", options.get("max_concurrency", options.get("concurrency", 8)))
    try:
        concurrency = int(concurrency)
        if concurrency < 1:
            raise ValueError
    except (TypeError, ValueError):
        raise InputError(f"judge spec {spec_string!r}: concurrency must be a whole number ≥ 1", field="judge") from None
    given = options.get("family") or opts.get("family")
    family = parse_family(given) if given else None   # the code's model is unknown unless the user names it
    scale = _declared(fn, opts, spec_string)
    spec = JudgeSpec(id=options["id"], backend="python", model=qualname, family=family,
                     template_version=str(version) if version is not None else source_version(fn),
                     params={"scale": scale.model_dump()} if scale is not None else {},
                     options={"concurrency": concurrency})
    return PythonJudge(spec, fn, scale)


def _declared(fn: Callable[..., Any], opts: dict[str, str], spec: str) -> Scale | None:
    """The scale a python judge grades on: ``?scale=LO,HI[&higher=better|worse]`` on the spec, else the
    callable's ``judge_scale`` attribute; None (the 1–9) when neither is given. The spec's wins."""
    given = opts.get("scale", getattr(fn, SCALE_ATTRIBUTE, None))
    if given is None:
        if "higher" in opts:
            raise InputError(f"judge spec {spec!r}: higher= says which end of a declared scale is the defect; "
                             "give scale=LO,HI too", field="judge")
        return None
    try:
        return declared_scale(given, opts.get("higher"))
    except ValueError as e:
        source = "scale=" if "scale" in opts else f"the callable's {SCALE_ATTRIBUTE}"
        raise InputError(f"judge spec {spec!r}: {source}: {e}", field="judge") from None
