"""Spec strings ``NAME?key=value&key=value``: the one reader of a spec's options.

Every spec with options reads them here — judge specs (``api:openai/gpt-4o-mini?family=google``,
``python:pkg.mod:fn?version=2``, ``replay:verdicts.jsonl?scale=1,10``, ``structural:lexical?top_k=5``),
data-set specs (``judgebench:PATH?max_rows=20``) — by one rule:

* the options follow the first ``?``; pairs are separated by ``&``, a key from its value by the first ``=``;
* percent escapes are decoded (``%26`` is a ``&`` inside a value, ``%3D`` an ``=`` inside a key); ``+`` is a
  plus (``family=alibaba+nvidia`` joins two vendors), never a space;
* an empty pair (``a=1&&b=2``, a trailing ``&``) is skipped;
* a pair without ``=`` (``?top_k``), an empty key (``?=5``), a blank value (``?version=``) and a key given
  twice (``?scale=1,5&scale=1,10``) are errors: one ``InputError`` line naming the spec and the key.

Which keys a spec takes is for its reader to say (an unknown key is its error, naming the keys it reads).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import quote, unquote, urlencode

from judgeaudit.errors import InputError


def name_of(spec: str) -> str:
    """The part of a spec before its options (``path?k=v`` → ``path``)."""
    return spec.partition("?")[0]


def parse_options(query: str, *, spec: str | None = None, field: str | None = None) -> dict[str, str]:
    """The options of a spec's query (the text after its ``?``) by the rule above, in their order.
    ``spec`` (the whole spec, for the message) and ``field`` (of the ``InputError``) name what is read."""
    where = f"spec {spec!r}" if spec is not None else f"options {query!r}"
    out: dict[str, str] = {}
    for pair in query.split("&"):
        if not pair:
            continue
        raw_key, eq, raw_value = pair.partition("=")
        key, value = unquote(raw_key).strip(), unquote(raw_value)
        if not key:
            raise InputError(f"{where}: an option has no name ({pair!r}; write key=value)", field=field)
        if not eq:
            raise InputError(f"{where}: option {key!r} has no value (write {key}=VALUE)", field=field or key)
        if not value.strip():
            raise InputError(f"{where}: option {key!r} is blank (write {key}=VALUE, or leave the option out)",
                             field=field or key)
        if key in out:
            raise InputError(f"{where}: option {key!r} is given twice", field=field or key)
        out[key] = value
    return out


def split(spec: str, *, field: str | None = None) -> tuple[str, dict[str, str]]:
    """``name?k=v&…`` → ``(name, options)`` (:func:`parse_options`; no ``?``: no options)."""
    name, _, query = spec.partition("?")
    return name, parse_options(query, spec=spec, field=field)


def join(name: str, options: Mapping[str, str] | Iterable[tuple[str, str]]) -> str:
    """The spec ``name?k=v&…`` (just ``name`` without options); keys and values percent-escaped so
    that :func:`split` reads them back unchanged (a space as ``%20``, a ``+`` as ``%2B``)."""
    pairs = list(options.items() if isinstance(options, Mapping) else options)
    return f"{name}?{urlencode(pairs, quote_via=quote)}" if pairs else name


def pop(spec: str, key: str, *, field: str | None = None) -> tuple[str, str | None]:
    """``(spec without the option key, its value)``; the spec unchanged and None when it has no such
    option. The other options are kept, in their order."""
    name, sep, query = spec.partition("?")
    if not sep:
        return spec, None
    opts = parse_options(query, spec=spec, field=field)
    if key not in opts:
        return spec, None
    value = opts.pop(key)
    return join(name, opts), value
