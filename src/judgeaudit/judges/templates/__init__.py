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
for a registered family (``family: world``), that family's blocks (``judges.forms``). Rendering is
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
import re
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import jinja2
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from judgeaudit.errors import InputError
from judgeaudit.yamlfile import line_of, load_yaml
from judgeaudit.judges.forms import family as get_family
from judgeaudit.judges.replies import FORMATS, ParseResult
from judgeaudit.judges.scale import Scale
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
                rx = re.compile(self.pattern)
            except re.error as e:
                raise ValueError(f"the regex does not compile ({e})") from None
            if not {"score", "choice", "verdict"} & set(rx.groupindex):
                raise ValueError("the regex needs a named group (?P<score>...), (?P<choice>...) or (?P<verdict>...)")
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
        env = _env()
        for part in ("system", "user"):
            text = getattr(self, part)
            if text is not None:
                try:
                    env.parse(text)
                except jinja2.TemplateSyntaxError as e:
                    raise _FieldProblem(part, f"Jinja2 syntax error on its line {e.lineno}: {e.message}") from None
        return self

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
        env = _env()
        try:
            system = env.from_string(self.system).render(ctx) if self.system is not None else None
            user = env.from_string(self.user).render(ctx)
        except jinja2.UndefinedError as e:
            raise InputError(f"template {self.name} {e.message}: request {request.request_id} has no such field "
                             f"(it has: {', '.join(sorted(ctx))})", field="template") from None
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


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)


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
