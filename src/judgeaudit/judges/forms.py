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


_FAMILIES: dict[str, TemplateFamily] = {}


def register_family(family: TemplateFamily) -> TemplateFamily:
    _FAMILIES[family.name] = family
    return family


PLUGIN_GROUP = "judgeaudit.template_families"
"""The entry-point group a package names its template families under (each entry: a module that
registers them when imported; ``judgeaudit.plugins``)."""


def _load_plugins() -> None:
    from judgeaudit.plugins import load

    load(PLUGIN_GROUP)


def family(name: str) -> TemplateFamily:
    """The registered family ``name`` (loading the entry point of that name in
    ``judgeaudit.template_families`` when nothing has registered it yet); a LookupError naming the
    registered ones otherwise."""
    if name not in _FAMILIES:
        _load_plugins()
    try:
        return _FAMILIES[name]
    except KeyError:
        known = ", ".join(sorted(_FAMILIES)) or "none"
        raise LookupError(f"no template family {name!r} is registered (registered: {known}); the package "
                          "that builds these requests registers it when it is imported") from None


def families() -> dict[str, TemplateFamily]:
    return dict(_FAMILIES)
