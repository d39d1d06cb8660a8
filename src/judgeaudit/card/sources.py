"""The runs a card or a checklist reads: every ``result.json`` under the given folders, with the
analysis that wrote it detected by its keys (``judgeaudit.runinfo.result_kind``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgeaudit.errors import InputError
from judgeaudit.runfolder import result_files
from judgeaudit.runinfo import result_kind


@dataclass(frozen=True)
class Run:
    path: Path
    kind: str | None
    data: dict[str, Any]

    @property
    def run_id(self) -> str | None:
        return self.data.get("run_id")

    @property
    def created_at(self) -> str | None:
        return self.data.get("created_at")


def collect(dirs: Iterable[str | Path]) -> list[Run]:
    """Every ``result.json`` at or under ``dirs``, oldest first by ``created_at`` where recorded."""
    runs, seen = [], set()
    for d in map(Path, dirs):
        if not d.exists():
            raise InputError("no such folder", path=d, field="--from")
        for f in ([d] if d.is_file() else result_files(d)):
            if f.resolve() in seen:   # a folder given twice, or inside another given folder: one run
                continue
            seen.add(f.resolve())
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
                raise InputError(f"cannot read this result ({e})", path=f) from None
            if isinstance(data, dict):
                runs.append(Run(f, result_kind(data), data))
    return sorted(runs, key=lambda r: r.created_at or "")


def of_kind(runs: Iterable[Run], kind: str) -> list[Run]:
    return [r for r in runs if r.kind == kind]
