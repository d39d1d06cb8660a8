"""The registry of template families beyond the three of ``elicit`` (graded, pairwise, defects).

A higher layer that defines its own verdict forms (the world package's report forms, blind-spot §3)
registers here how its requests are rendered, how their replies are read, which fields their
templates may name, and which Verdict fields a reply fills. ``judges`` reaches them only through
this registry, so it never imports the layer above it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from judgeaudit.judges.replies import ParseResult
from judgeaudit.records import JudgeRequest
from judgeaudit.registry import Registry


@dataclass(frozen=True)
class TemplateFamily:
    """How one family of requests (``request.meta['template']``) is rendered and read."""

    name: str
    forms: tuple[str, ...]
    render: Callable[[JudgeRequest], str]
    parse: Callable[[JudgeRequest, str | None], ParseResult]
    #: the variables a user template for these requests may name (beyond the request's own fields)
    context: Callable[[JudgeRequest], dict[str, Any]] | None = None
    #: the Verdict fields a reply fills
    verdict_fields: Callable[[JudgeRequest, ParseResult], dict[str, Any]] | None = None
    version: str | None = None
    #: form -> the JSON key a reply of that form carries its answer under (replayed files are written so)
    reply_keys: dict[str, str] | None = None


PLUGIN_GROUP = "judgeaudit.template_families"
"""The entry-point group a package names its template families under (each entry: a module that
registers them when imported; ``judgeaudit.registry``)."""

FAMILIES: Registry[TemplateFamily] = Registry("template family", PLUGIN_GROUP)
"""The template families by name; the package that builds a family's requests registers it when imported
(judgeaudit's ``world`` is declared by the top package and loaded on the first lookup of its name)."""


def register_family(family: TemplateFamily) -> TemplateFamily:
    """Register ``family`` under its name (a name is taken once: ``Registry.register``)."""
    return FAMILIES.register(family.name, family)


def family(name: str) -> TemplateFamily:
    """The registered family ``name`` (loading the plug-in of that name on first use); a LookupError naming
    the registered ones otherwise."""
    return FAMILIES.get(name)


def families() -> dict[str, TemplateFamily]:
    """The families registered so far (loading none)."""
    return FAMILIES.loaded()
