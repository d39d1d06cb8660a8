"""Judge templates: the prompt, scale and reply format of the judge a user deploys.

A template is a small versioned YAML file::

    name: my-grader
    version: "1"
    form: graded                 # graded | pairwise | defects | generate | a family's form (world: label, ...)
    scale: {min: 1, max: 10, higher: better}     # or: pass_fail
    source: where the prompt comes from (a paper, a repository)
    system: You are a strict grader.
    user: |
      [Question]
      {{ prompt }}
      [Answer]
      {{ text }}
      Rate the answer from 1 to 10 as "Rating: [[N]]".
    parser: "[[rating]]"         # a named reply format (replies.FORMATS), {json: $.score}, {regex: "..."}

``system`` and ``user`` are Jinja2 templates over the request's fields (``text``, ``evidence``,
``criterion``, ``prompt``, ``response_a``, ``response_b``, ``question``, ``reference``, ``units``) and,
for a registered family (``family: world``), that family's blocks (``judges.forms``): their only
context. A template is someone else's file, so it is rendered in the bounded sandbox
(``judges.templates.sandbox``: no code, no file, bounded loops and output). Loading a template checks
every part of it before any call: the prompt (parsed, then rendered against a request that has every
field, so that what the sandbox refuses is refused here, naming the file, line and field), the parser
(a regex that compiles and finishes on probe strings, ``judges.userpattern``; a JSON path that reads)
and the scale (at most ``judges.scale.MAX_POINTS`` points). Rendering is
strict (``StrictUndefined``): a field the request lacks is undefined, so a template that names it
is refused before any call (``{% if evidence is defined %}`` tests for it). The template's name,
version and the hash of its text enter the judge's fingerprint (hence every call key) and every
result's provenance.

Built-in templates live beside this module (``*.yaml``, package data); ``get_template`` finds one
by name, or reads a file.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import jinja2
import jinja2.sandbox
import regex
from jinja2 import nodes
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from judgeaudit.errors import InputError
from judgeaudit.yamlfile import line_of, load_yaml
from judgeaudit.judges.forms import family as get_family
from judgeaudit.judges import userpattern
from judgeaudit.judges.replies import FORMATS, ParseResult, check_json_path
from judgeaudit.judges.scale import Scale
from judgeaudit.judges.templates import sandbox
from judgeaudit.records import JudgeRequest

REQUEST_FIELDS = ("text", "evidence", "criterion", "prompt", "response_a", "response_b", "question",
                  "reference", "units")
BASE_FORMS = ("graded", "pairwise", "defects", "generate")


class _FieldProblem(ValueError):
    """A whole-template check that concerns one field (so that the error names its line)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


class ParserSpec(BaseModel):
    """How a reply is read: a named format, a JSON path or a regex with a named group."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = "auto"
    path: str | None = None
    pattern: str | None = None
    #: what a read value means (``{"a": "A", "b": "B"}``; ``{"Yes": "pass"}``)
    choices: dict[str, str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, v: Any) -> Any:
        if isinstance(v, str):
            return {"format": v}
        if isinstance(v, dict) and "json" in v:
            return {"format": "json", "path": v["json"], **{k: x for k, x in v.items() if k != "json"}}
        if isinstance(v, dict) and "regex" in v:
            return {"format": "regex", "pattern": v["regex"], **{k: x for k, x in v.items() if k != "regex"}}
        return v

    @model_validator(mode="after")
    def _check(self) -> ParserSpec:
        if self.format not in FORMATS:
            raise ValueError(f"unknown reply format {self.format!r}; one of: {', '.join(FORMATS)}")
        if self.format == "json" and not self.path:
            raise ValueError("a json parser needs a path, e.g. {json: $.score}")
        if self.format == "regex":
            if not self.pattern:
                raise ValueError("a regex parser needs a pattern")
            try:
                rx = userpattern.compile_pattern(self.pattern)
            except regex.error as e:
                raise ValueError(f"the regex does not compile ({e})") from None
            if not {"score", "choice", "verdict"} & set(rx.groupindex):
                raise ValueError("the regex needs a named group (?P<score>...), (?P<choice>...) or (?P<verdict>...)")
            userpattern.check(self.pattern)
        if self.format == "json" and self.path:
            check_json_path(self.path)
        return self


class JudgeTemplate(BaseModel):
    """One judge template (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    version: str = Field(min_length=1)
    form: str
    family: str | None = None
    scale: Scale | None = None
    system: str | None = None
    user: str
    parser: ParserSpec = Field(default_factory=ParserSpec)
    #: ``parsed``: the grade the parser read; ``probability_weighted``: the expected grade under the
    #: returned log-probabilities at that digit (G-Eval), the parsed grade where none are returned
    score: Literal["parsed", "probability_weighted"] = "parsed"
    #: text the embedded local judge appends after the prompt before it reads the grade's token
    answer_prefix: str | None = None
    source: str | None = None
    description: str | None = None
    #: the built-in defaults: the request form this entry renders exactly as ``elicit`` does
    default_for: str | None = None

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) else v

    @field_validator("scale", mode="before")
    @classmethod
    def _scale(cls, v: Any) -> Any:
        if v == "pass_fail":
            return Scale.passfail()
        if isinstance(v, dict) and "higher" not in v:
            return {**v, "higher": "better"}
        return v

    @model_validator(mode="after")
    def _check(self) -> JudgeTemplate:
        if self.family is None and self.form not in BASE_FORMS:
            raise _FieldProblem("form", f"form must be one of {', '.join(BASE_FORMS)} (or name a family: world)")
        if self.form == "graded" and self.scale is None:
            raise _FieldProblem("scale", "a graded template needs a scale ({min: 1, max: 10} or pass_fail)")
        forms = FORMATS[self.parser.format][0]
        if self.family is None and self.form not in forms:
            raise _FieldProblem("parser", f"reply format {self.parser.format!r} reads {', '.join(forms)} replies, "
                                f"not {self.form}")
        if self.scale is not None and self.scale.pass_fail and self.parser.format in ("[[rating]]", "Score: N"):
            raise _FieldProblem("parser", f"reply format {self.parser.format!r} reads grades; a pass/fail scale "
                                "uses pass/fail")
        for part in ("system", "user"):
            text = getattr(self, part)
            if text is not None:
                try:
                    tree = sandbox.environment().parse(text)
                except jinja2.TemplateSyntaxError as e:
                    raise _FieldProblem(part, f"Jinja2 syntax error on its line {e.lineno}: {e.message}") from None
                if (why := _reaches_out(tree)) is not None:
                    raise _FieldProblem(part, f"the sandbox refuses it: {why}")
        self._test_render()
        return self

    def _test_render(self) -> None:
        """Render every part against a request that has every field, so that a template the sandbox
        refuses (or one over a render budget) is refused when it is loaded, before any call."""
        ctx: dict[str, Any] = {k: f"<{k}>" for k in REQUEST_FIELDS if k != "units"}
        ctx["units"] = ["<unit 1>", "<unit 2>"]
        if self.scale is not None:
            ctx["scale"] = self.scale.to_dict()
        if self.family is not None:
            try:
                fam = get_family(self.family)
                probe = JudgeRequest(request_id="probe", form=self.form, **{k: v for k, v in ctx.items()
                                                                          if k in REQUEST_FIELDS})
                ctx.update(fam.context(probe) if fam.context is not None else {})
            except Exception:   # noqa: BLE001 - the family's own blocks are then left out of the probe
                pass
        for part in ("system", "user"):
            text = getattr(self, part)
            if text is None:
                continue
            try:
                sandbox.render(text, ctx)
            except jinja2.sandbox.SecurityError as e:
                raise _FieldProblem(part, f"the sandbox refuses it: {e}") from None
            except jinja2.UndefinedError as e:
                if self.family is None:   # every field is set here: the name is none of them
                    raise _FieldProblem(part, f"{e.message}: a template names the request's fields "
                                        f"({', '.join(REQUEST_FIELDS)}) and scale") from None
                # a family's own blocks may be missing from the probe: a name no request has is refused,
                # naming the request, when it is rendered
            except (jinja2.TemplateError, TypeError, ValueError, LookupError, ArithmeticError) as e:
                raise _FieldProblem(part, f"it does not render ({type(e).__name__}: {e})") from None

    # ------------------------------------------------------------------ identity
    @cached_property
    def sha256(self) -> str:
        """Hash of everything that changes a verdict: the prompt text, the form, scale and parser."""
        payload = {"system": self.system, "user": self.user, "form": self.form, "family": self.family,
                   "scale": self.scale.model_dump() if self.scale else None, "parser": self.parser.model_dump(),
                   "score": self.score, "answer_prefix": self.answer_prefix}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def ref(self) -> dict[str, Any]:
        """``{name, version, sha256}``: what enters the judge's fingerprint and the provenance."""
        return {"name": self.name, "version": self.version, "sha256": self.sha256[:16]}

    def provenance(self) -> dict[str, Any]:
        """The record a result keeps of this template (``result.json`` ``judges.<id>.template``)."""
        return {**self.ref(), "form": self.form, "scale": self.scale.to_dict() if self.scale else None,
                "parser": self.parser.format, "score": self.score, "source": self.source}

    # ------------------------------------------------------------------ use
    def context(self, request: JudgeRequest) -> dict[str, Any]:
        """The variables the template sees: the request's fields that are set, and a family's blocks."""
        ctx: dict[str, Any] = {k: getattr(request, k) for k in REQUEST_FIELDS if getattr(request, k) is not None}
        if self.scale is not None:
            ctx["scale"] = self.scale.to_dict()
        if self.family is not None:
            fam = get_family(self.family)
            if fam.context is not None:
                ctx.update(fam.context(request))
        return ctx

    def render_parts(self, request: JudgeRequest) -> tuple[str | None, str]:
        """``(system, user)`` for ``request``; ``InputError`` naming the field the request lacks."""
        if self.form != request.form:
            raise InputError(f"template {self.name} answers {self.form} requests, not {request.form} "
                             f"({request.request_id})", field="template")
        ctx = self.context(request)
        try:
            system = sandbox.render(self.system, ctx) if self.system is not None else None
            user = sandbox.render(self.user, ctx)
        except jinja2.UndefinedError as e:
            raise InputError(f"template {self.name} {e.message}: request {request.request_id} has no such field "
                             f"(it has: {', '.join(sorted(ctx))})", field="template") from None
        except jinja2.sandbox.SecurityError as e:
            raise InputError(f"template {self.name}: the sandbox refuses it on request {request.request_id}: {e}",
                             field="template") from None
        except (jinja2.TemplateError, TypeError, ValueError, LookupError, ArithmeticError) as e:
            raise InputError(f"template {self.name} does not render request {request.request_id} "
                             f"({type(e).__name__}: {e})", field="template") from None
        return system, user

    def render(self, request: JudgeRequest) -> str:
        """The one text the call key hashes: the user part, or the system and user parts, marked."""
        system, user = self.render_parts(request)
        return user if system is None else f"[system]\n{system}\n[user]\n{user}"

    def messages(self, request: JudgeRequest) -> list[dict[str, str]]:
        system, user = self.render_parts(request)
        return ([{"role": "system", "content": system}] if system is not None else []) + \
            [{"role": "user", "content": user}]

    def parse(self, request: JudgeRequest, text: str | None) -> ParseResult:
        """Read a reply with this template's parser on its scale."""
        if self.family is not None and self.parser.format == "auto":
            return get_family(self.family).parse(request, text)
        _, reader, _ = FORMATS[self.parser.format]
        return reader(text, self.form, self.scale or Scale(), self.parser.model_dump())


_OUTSIDE = (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)


def _reaches_out(tree: nodes.Template) -> str | None:
    """Why a parsed template reaches past its context (another file, a private attribute), or None."""
    if next(tree.find_all(_OUTSIDE), None) is not None:
        return "a template cannot include, import or extend another file"
    for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter)):
        if isinstance(node, nodes.Getattr):
            name = node.attr
        elif isinstance(node, nodes.Getitem):
            name = node.arg.value if isinstance(node.arg, nodes.Const) else None
        else:
            name = node.args[0].value if node.name == "attr" and node.args and \
                isinstance(node.args[0], nodes.Const) else None
        if isinstance(name, str) and name.startswith("_"):
            return f"the attribute {name!r} is private (line {node.lineno})"
    return None


# ---------------------------------------------------------------------------- loading

def parse_template(text: str, *, path: str | Path = "<template>") -> JudgeTemplate:
    """A template from YAML text; ``InputError`` naming the file, line and field otherwise."""
    node, data = load_yaml(text, path)
    if not isinstance(data, dict):
        raise InputError("a template file is a YAML mapping (name, version, form, scale, system, user, parser)",
                         path=path, line=1)
    try:
        return JudgeTemplate.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        problem = (first.get("ctx") or {}).get("error")
        loc = [problem.field] if isinstance(problem, _FieldProblem) else [str(x) for x in first["loc"]]
        key = loc[0] if loc else None
        msg = "required field is missing" if first["type"] == "missing" else first["msg"].removeprefix("Value error, ")
        line = line_of(node, (key,), key_line=True) if key in data else 1
        raise InputError(msg, path=path, line=line, field=".".join(loc) or None) from None


def read_template(path: str | Path) -> JudgeTemplate:
    from judgeaudit.io import read_text

    return parse_template(read_text(path), path=path)


@lru_cache(maxsize=1)
def library() -> dict[str, JudgeTemplate]:
    """The built-in templates by name (the ``*.yaml`` files of this package)."""
    out: dict[str, JudgeTemplate] = {}
    for f in sorted(resources.files(__name__).iterdir(), key=lambda p: p.name):
        if f.name.endswith(".yaml"):
            t = parse_template(f.read_text(encoding="utf-8"), path=f"judgeaudit/judges/templates/{f.name}")
            out[t.name] = t
    return out


def get_template(name_or_path: str | Path) -> JudgeTemplate:
    """A built-in template by name, or a template file by path."""
    key = str(name_or_path)
    lib = library()
    if key in lib:
        return lib[key]
    p = Path(key)
    if p.suffix in (".yaml", ".yml") or p.exists():
        if not p.exists():
            raise InputError(f"{p}: not found", field="template")
        return read_template(p)
    raise InputError(f"unknown template {key!r}: name a file or one of: {', '.join(sorted(lib))}", field="template")


def default_for(form: str) -> JudgeTemplate | None:
    """The built-in entry that renders ``form`` requests exactly as ``elicit`` does."""
    return next((t for t in library().values() if t.default_for == form), None)
