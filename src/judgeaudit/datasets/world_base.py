"""What the world adapters share (``world_corpora``, ``world_generic``): the type an adapter returns,
a validated world item built from a source record, and the exclusion counts of its provenance. The
registry of adapters (``world``) imports the adapters, which import this module: imports point one way.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from judgeaudit.errors import InputError
from judgeaudit.records import WorldItem

AdapterResult = tuple[list[WorldItem], dict[str, Any]]
"""What a world adapter returns: the items and its provenance (``files``, ``excluded``, …)."""


def make_item(*, path: str | Path, line: int | None, world_field: str | None = None,
              span_field: str = "spans", **fields: Any) -> WorldItem:
    """A validated :class:`WorldItem`; ``InputError`` naming ``path``, ``line`` and the source
    field when the world is missing or empty (when ``world_field`` names where it should be), or a
    span or unit lies outside the output text."""
    if world_field is not None:
        w = fields.get("world")
        if not isinstance(w, str) or not w.strip():
            raise InputError("the world (the source the output must be judged against) is missing or empty",
                             path=path, line=line, field=world_field)
    try:
        item = WorldItem(**fields)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        raise InputError(f"invalid value ({err['msg']})", path=path, line=line, field=loc) from None
    n = len(item.output)
    for i, s in enumerate(item.spans):
        if not 0 <= s.start < s.end <= n:
            raise InputError(f"span [{s.start}, {s.end}) lies outside the output ({n} characters)",
                             path=path, line=line, field=f"{span_field}[{i}]")
    for u in item.units:
        if (u.start is None) != (u.end is None) or (u.start is not None and not 0 <= u.start <= u.end <= n):
            raise InputError(f"unit {u.unit_id} [{u.start}, {u.end}) lies outside the output ({n} characters)",
                             path=path, line=line, field="units")
    return item


def excluded(counts: Mapping[str, int]) -> dict[str, int]:
    """Reason → count, without reasons that excluded nothing."""
    return {k: int(v) for k, v in counts.items() if v}
