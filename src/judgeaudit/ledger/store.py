"""Reading and writing a ledger file: YAML (``.yaml``/``.yml``) or JSON (``.json``).

A malformed ledger raises ``InputError`` naming the file, the line of the offending entry and the
field. The file holds ``predictions:`` (a list) and ``commits:`` (written by ``commit``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from judgeaudit.errors import InputError
from judgeaudit.yamlfile import line_of, load_yaml
from judgeaudit.ledger.model import Ledger


def parse_ledger(text: str, path: str | Path = "<ledger>") -> Ledger:
    """The ledger in ``text`` (YAML, of which JSON is a subset)."""
    node, data = load_yaml(text, path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("a ledger is a mapping with 'predictions' (and 'commits')", path=path, line=1)
    try:
        return Ledger.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = tuple(err["loc"])
        cause = err.get("ctx", {}).get("error")
        field = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in loc).lstrip(".")
        if isinstance(cause, InputError):
            msg, field = cause.message, ".".join(x for x in (field, cause.field) if x)
        else:
            msg = str(cause or err["msg"]).removeprefix("Value error, ")
        raise InputError(msg, path=path, line=line_of(node, loc), field=field or None) from None


def read_ledger(path: str | Path) -> Ledger:
    """The ledger at ``path``; an absent file is an empty ledger."""
    p = Path(path)
    if not p.exists():
        return Ledger()
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read the ledger ({e})", path=p) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise InputError(f"byte {raw[e.start:e.start + 1]!r} at column {col} is not UTF-8 (a ledger is UTF-8 text)",
                         path=p, line=line) from None
    return parse_ledger(text, p)


def ledger_dict(ledger: Ledger) -> dict[str, Any]:
    """The file form: defaults and empty fields left out, bars as written plus their parse."""
    return ledger.model_dump(mode="json", exclude_none=True, exclude_defaults=True)


def write_ledger(path: str | Path, ledger: Ledger) -> None:
    p = Path(path)
    d = ledger_dict(ledger)
    if p.suffix.lower() == ".json":
        text = json.dumps(d, indent=2, ensure_ascii=False) + "\n"
    else:
        text = yaml.safe_dump(d, sort_keys=False, allow_unicode=True, width=110)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
