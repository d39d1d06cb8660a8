"""Paths as a card meant for sharing carries them: every absolute path of the machine that built it is
written relative to the card's folder (``../runs/validity/result.json``), or, under the data folder
installed with judgeaudit, as ``DATA/<name>``; ``localize`` reads them back against the card's folder
(``card diff`` finds the runs a card read from wherever it is run)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

DATA_PREFIX = "DATA"
DATA_NOTE = "DATA: the data folder installed with judgeaudit"
_ABSOLUTE = re.compile(r"(?<![\w.~-])/[^\s'\"<>?&;,()\[\]{}|*=]+")
"""A candidate absolute path inside free text (a spec's options after ``?`` are not part of it)."""


def _data_roots() -> list[Path]:
    from judgeaudit.card.defaults import DATA

    return list(dict.fromkeys([DATA, DATA.resolve()]))


def shared_path(p: str | Path, base: str | Path) -> str:
    """``p`` as a shared card writes it: ``DATA/…`` under judgeaudit's data folder, else relative to
    ``base`` (the card's folder); a relative ``p`` is returned as it is."""
    s = str(p)
    if not os.path.isabs(s):
        return s
    q = Path(s)
    for root in _data_roots():
        for cand in (q, q.resolve()):
            try:
                rest = cand.relative_to(root).as_posix()
            except ValueError:
                continue
            return DATA_PREFIX if rest == "." else f"{DATA_PREFIX}/{rest}"
    return Path(os.path.relpath(q.resolve(), Path(base).resolve())).as_posix()


def _on_machine(m: str) -> bool:
    """``m`` starts at a top-level folder of this file system (``/judges/…``, a JSON pointer, does not)."""
    first = m.strip("/").split("/", 1)[0]
    return bool(first) and os.path.isdir("/" + first)


def _text(s: str, base: Path) -> str:
    def one(m: re.Match) -> str:
        path = m.group(0)
        tail = len(path) - len(path.rstrip(".:"))
        core = path[: len(path) - tail] if tail else path
        return shared_path(core, base) + path[len(core):] if _on_machine(core) else path

    return _ABSOLUTE.sub(one, s) if "/" in s else s


def shareable(x: Any, base: str | Path) -> Any:
    """``x`` (a card, or any JSON value) with every absolute path in its strings and keys written as
    ``shared_path`` writes it; a section's "not measured" line naming ``DATA/…`` says what DATA is."""
    base = Path(base)
    if isinstance(x, str):
        return _text(x, base)
    if isinstance(x, list):
        return [shareable(v, base) for v in x]
    if isinstance(x, dict):
        out = {_text(k, base) if isinstance(k, str) else k: shareable(v, base) for k, v in x.items()}
        nm = out.get("not_measured")
        if isinstance(nm, str) and f"{DATA_PREFIX}/" in nm and DATA_NOTE not in nm:
            out["not_measured"] = f"{nm} ({DATA_NOTE})"
        return out
    return x


def shared_hints(x: Any) -> Any:
    """``x`` (a card built in memory) with its "not measured — run: …" hints written as a shared card writes
    them (``DATA/…``), so a card read from its file and one built from the runs say the same."""
    if isinstance(x, list):
        return [shared_hints(v) for v in x]
    if isinstance(x, dict):
        out = {k: shared_hints(v) for k, v in x.items()}
        if isinstance(out.get("not_measured"), str):
            out["not_measured"] = shareable({"not_measured": out["not_measured"]}, Path.cwd())["not_measured"]
        return out
    return x


def local_path(p: str, folder: str | Path) -> str:
    """A path a shared card wrote, read on this machine: ``DATA/…`` under judgeaudit's data folder,
    another relative path against the card's ``folder``; an absolute path as it is."""
    if os.path.isabs(p):
        return p
    if p == DATA_PREFIX or p.startswith(f"{DATA_PREFIX}/"):
        from judgeaudit.card.defaults import DATA

        return str(DATA / p[len(DATA_PREFIX) + 1:]) if p != DATA_PREFIX else str(DATA)
    return str((Path(folder) / p).resolve())


def localize(x: Any, folder: str | Path) -> Any:
    """A card read from ``folder``: the paths of its sources (``path`` beside a ``run_id``) and of their
    recorded input files (``path`` beside a ``sha256``) as paths on this machine (``local_path``)."""
    if isinstance(x, list):
        return [localize(v, folder) for v in x]
    if isinstance(x, dict):
        out = {k: localize(v, folder) for k, v in x.items()}
        if isinstance(out.get("path"), str) and ("run_id" in out or "sha256" in out):
            out["path"] = local_path(out["path"], folder)
        return out
    return x
