"""When a judge's model is retired: the ``deprecation_date`` LiteLLM's model map records for it (the map that
ships with the pinned LiteLLM, read as a file, without importing LiteLLM), and the warning every command prints
when that date is near (``JUDGEAUDIT_RETIREMENT_DAYS``, default 90) or past."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
from datetime import date
from pathlib import Path

DEFAULT_DAYS = 90
_MAP = "model_prices_and_context_window_backup.json"


@functools.lru_cache(maxsize=1)
def _dates() -> dict[str, str]:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / _MAP
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out = {}
    for model, entry in d.items():
        text = entry.get("deprecation_date") if isinstance(entry, dict) else None
        try:
            date.fromisoformat(str(text))
        except ValueError:
            continue
        out[model] = str(text)
    return out


def deprecation_date(model: str | None) -> date | None:
    """The date LiteLLM's map says ``model`` (``provider/name`` or ``name``) is retired; None when it records
    none."""
    if not model:
        return None
    dates = _dates()
    for key in (model, model.split("/", 1)[-1]):
        if key in dates:
            return date.fromisoformat(dates[key])
    return None


def window_days() -> int:
    """How many days ahead a retirement is announced (``JUDGEAUDIT_RETIREMENT_DAYS``, default 90)."""
    text = os.environ.get("JUDGEAUDIT_RETIREMENT_DAYS", "").strip()
    try:
        return max(0, int(text)) if text else DEFAULT_DAYS
    except ValueError:
        return DEFAULT_DAYS


def retirement_note(judge_id: str, model: str | None, *, today: date | None = None,
                    days: int | None = None) -> str | None:
    """One line when ``model`` retires within ``days`` of ``today`` (or has retired); None otherwise."""
    when = deprecation_date(model)
    if when is None:
        return None
    today = today or date.today()
    days = window_days() if days is None else days
    left = (when - today).days
    if left > days:
        return None
    what = f"retires on {when.isoformat()} ({left} days)" if left >= 0 else f"was retired on {when.isoformat()}"
    return (f"judge {judge_id}: model {model} {what} according to LiteLLM's model map; run `judgeaudit migrate "
            "--old … --new …` on your anchors to check a replacement before then")
