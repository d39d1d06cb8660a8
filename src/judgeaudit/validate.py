"""Checks at the edge, shared by the command line and the experiment YAML.

``OPTION_RULES`` is the one table of option rules: the CLI handlers call ``check_options`` and the
YAML loader calls ``option_problem`` for the same names, so a value refused on one path is refused
on the other with the same words.

Outputs: ``output_file`` and ``output_dir`` are the one guard every writer of a path calls, before any
input is read or any call is made. They refuse a path that would write over one of the command's own
inputs, over a SQLite database (a call store or a study), over another run's folder, or over any
existing file the same kind of output did not write itself, and a path of the wrong kind (a file where
a folder is expected, or the reverse); a command may replace its own earlier output. What a command
wrote is recorded when it ends (``record_outputs``): a folder in its manifest (``runfolder``), a file in
``.judgeaudit-outputs.json`` beside it (its name, who wrote it and its SHA-256: a file changed since is
no longer the command's).

Why a ``ContextVar`` (``_CLAIMED``, the outputs claimed so far): it is no configuration but what the running
command's guards have claimed, collected from wherever a writer calls ``output_file``/``output_dir`` and
recorded once when the command ends (``record_outputs``); a command in another thread or task keeps its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from contextvars import ContextVar
from pathlib import Path

from judgeaudit.errors import InputError
from judgeaudit.specs import name_of


from judgeaudit import options as declared  # noqa: E402 - the declared options' rules
from judgeaudit.options import MAX_RESAMPLES, Rule  # noqa: E402,F401 - Rule: the rule type, public here too

MAX_ROUNDS = 20
"""Most loop rounds one run may ask for (the paper runs 3, §8.2): every round buys a judging and a
revision of every output under every arm, so a typo such as ``--rounds 1000000`` is refused before
the first call."""
MAX_VOTES = 25
"""Most judge samples per report or request (the paper pools 3, §3.4)."""

SUBTLETY_SCALE = (1, 5)
"""The subtlety gate's scale (``probes.cap_testbed.parse_subtlety``): ``--threshold`` must lie on it."""

OPTION_RULES: dict[str, Rule] = {
    **declared.SHARED.rules(),   # s_floor, bar, bootstrap, regrade, concurrency, timeout, retries, rpm
    "permutations": Rule(integer=True, lo=0, cap=MAX_RESAMPLES * 10),
    "max_items": Rule(integer=True, lo=1),
    "threshold": Rule(integer=True, lo=SUBTLETY_SCALE[0], hi=SUBTLETY_SCALE[1]),
    "length_tolerance": Rule(lo=0, hi=1),
    "annotators": Rule(integer=True, lo=1, cap=1000),
    "votes": Rule(integer=True, lo=1, hi=MAX_VOTES),    # world, loop: samples per request (blind-spot §3.4)
    "temperature": Rule(lo=0, cap=2),                    # the providers' own range
}
"""The options' rules: those of the declared shared options (``judgeaudit.options``), then the rules of options
not yet declared (an analysis's own declared options carry theirs: ``analyses.validity.options``,
``analyses.world.options``). The bounds are
judgeaudit's own (the papers set none); ``judgeaudit --help`` of each option and the
README list them. A value outside is refused before any input is read or any call is made."""


def option_problem(name: str, value: object) -> str | None:
    """Why option ``name`` may not take ``value`` (per ``OPTION_RULES``), or None."""
    return OPTION_RULES[name].problem(value)


def check_options(**values: object) -> None:
    """``InputError`` naming the first option (as ``--flag``) whose value breaks its rule."""
    for name, value in values.items():
        msg = option_problem(name, value)
        if msg is not None:
            raise InputError(msg, field="--" + name.replace("_", "-"))


# --- output paths -----------------------------------------------------------------------------------------

_SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path: Path) -> bool:
    """True when ``path`` is a file starting with the SQLite header (a call store or a study database)."""
    try:
        with path.open("rb") as fh:
            return fh.read(16) == _SQLITE_MAGIC
    except OSError:
        return False


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file: resolved paths (symlinks followed), else ``os.path.samefile``
    (hard links) when both exist."""
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _inputs(inputs: Iterable[str | Path | None]) -> list[Path]:
    return [Path(p) for p in inputs if p is not None and str(p) not in ("", ":memory:")]


def _utf8_name(p: Path, field: str) -> None:
    """A path whose name is not UTF-8 text (bytes the file system decoded as surrogates) is refused: every
    file the command writes, and every line it prints, names it."""
    text = os.fspath(p)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise InputError(f"the name is not UTF-8 text (byte 0x{ord(text[e.start]) & 0xFF:02x}); choose a UTF-8 "
                         "name", path=shown, field=field) from None


OUTPUTS = ".judgeaudit-outputs.json"
"""Beside a file a command wrote: ``{name: {"by": what wrote it, "sha256": …}}``."""

_CLAIMED: ContextVar[list[tuple[str, Path, str, tuple[str, ...]]] | None] = \
    ContextVar("judgeaudit_claimed_outputs", default=None)


def _claim(what: str, p: Path, by: str, writes: tuple[str, ...] = ()) -> None:
    claimed = _CLAIMED.get()
    if claimed is None:
        claimed = []
        _CLAIMED.set(claimed)
    claimed.append((what, p, by, writes))


def _written_by(p: Path) -> str | None:
    """Which kind of output wrote the file ``p`` (its record beside it, with the SHA-256 it has now), or None."""
    from judgeaudit.runinfo import file_sha256

    try:
        entry = json.loads((p.parent / OUTPUTS).read_text(encoding="utf-8")).get(p.name)
        return entry["by"] if entry["sha256"] == file_sha256(p) else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _default_by(field: str) -> str:
    """The command and option writing a file (``gate --summary``), from the running command line."""
    try:   # typer's own click (typer==0.29 carries one), else click's
        from typer._click.globals import get_current_context
    except ImportError:   # pragma: no cover - another typer
        from click import get_current_context
    names = []
    ctx = get_current_context(silent=True)
    while ctx is not None and ctx.parent is not None:   # the root's name is the program's (or python -m …)
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join([*reversed(names), field]).strip()


def output_file(path: str | Path, *, inputs: Iterable[str | Path | None] = (), field: str = "--out",
                by: str | None = None) -> Path:
    """Check a file the command is about to write: a UTF-8 name, not a folder, not one of ``inputs``, not a
    database, and, when it exists, written by the same kind of output ``by`` (default: the command and
    ``field``, ``gate --summary``) and unchanged since; the file is recorded as ``by``'s when the command
    ends (``record_outputs``)."""
    from judgeaudit.runfolder import MANIFEST

    p = Path(path)
    _utf8_name(p, field)
    by = by or _default_by(field)
    if p.is_dir():
        what = "holds a judgeaudit run" if (p / MANIFEST).exists() or (p / "result.json").exists() else "is a folder"
        raise InputError(f"{what}; a file is expected here — choose a new file name", path=p, field=field)
    for src in _inputs(inputs):
        if same_file(p, src):
            raise InputError(f"is one of this command's inputs ({src}); refusing to write over it", path=p,
                             field=field)
    if p.exists() and is_sqlite(p):
        raise InputError("is an existing SQLite database (a call store or a study); refusing to write over it",
                         path=p, field=field)
    if p.exists() and _written_by(p) != by:
        raise InputError(f"exists and is not an earlier {by} output (another file, a run's file, or one changed "
                         "since); refusing to write over it — choose a new name", path=p, field=field)
    _check_parents(p, field)
    _claim("file", p, by)
    return p


def output_store(path: str | Path | None, *, field: str = "--store") -> Path | None:
    """Check a call store the command is about to open for writing: a UTF-8 name, not a folder, and, when it
    exists, a SQLite database (a store runs share and resume from; judgeaudit's own schema is checked when it
    is opened) — never another file turned into one."""
    if path is None:
        return None
    p = Path(path)
    if str(p) in ("", ":memory:"):
        return p
    _utf8_name(p, field)
    if p.is_dir():
        raise InputError("is a folder; a call store (a SQLite file) is expected here", path=p, field=field)
    if p.exists() and not is_sqlite(p):
        raise InputError("exists and is not a call store (not a SQLite database); refusing to write into it — "
                         "name a new file or an existing store", path=p, field=field)
    _check_parents(p, field)
    return p


def begin_outputs() -> None:
    """Start collecting the outputs a command checks (the start of every command calls it)."""
    _CLAIMED.set([])


def record_outputs() -> None:
    """Record what the outputs checked since the last call now hold (see the module text); the end of every
    command calls it. A file is recorded as its checker's; a folder without a manifest gets one naming the
    command's kind and its files (a folder written as one set already has it)."""
    from judgeaudit.runfolder import mark_folder
    from judgeaudit.runinfo import file_sha256

    claimed = _CLAIMED.get() or []
    _CLAIMED.set([])
    for what, p, by, writes in claimed:
        try:
            if what == "folder":
                mark_folder(p, by, writes)
                continue
            if not p.is_file():
                continue
            rec_path = p.parent / OUTPUTS
            try:
                rec = json.loads(rec_path.read_text(encoding="utf-8"))
                rec = rec if isinstance(rec, dict) else {}
            except (OSError, ValueError):
                rec = {}
            rec[p.name] = {"by": by, "sha256": file_sha256(p)}
            tmp = rec_path.with_name(rec_path.name + f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(rec, indent=2, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, rec_path)
        except OSError:   # an unwritable folder: the output stands, unrecorded (it is refused next time)
            continue


def _check_parents(p: Path, field: str, *, itself: bool = False) -> None:
    """The nearest existing folder above ``p`` (``itself``: ``p`` when it is one) must be a folder (not a file
    standing in the way) that this process can write into (tried with an unnamed temporary file, which
    leaves nothing behind: a read-only file system or a folder of another user is refused before the run)."""
    import tempfile

    for parent in ([p] if itself and p.is_dir() else []) + list(p.parents):
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{parent} is a file; a folder is expected here", path=p, field=field)
            try:
                with tempfile.TemporaryFile(dir=parent):
                    pass
            except OSError as e:
                raise InputError(f"cannot write into {parent} ({e.strerror or type(e).__name__})", path=p,
                                 field=field) from None
            return


def output_dir(path: str | Path, *, writes: Iterable[str] = (), inputs: Iterable[str | Path | None] = (),
               field: str = "--out", kind: str | None = None, quiet: bool = False) -> Path:
    """Check a folder the command is about to write ``writes`` (file names) into: a UTF-8 name, none of
    ``inputs`` inside it overwritten, and new or holding the same analysis's own earlier run
    (``runfolder.claim``; ``kind`` defaults to the running command, ``calibrate``), saying which on stderr.
    The folder is marked as ``kind``'s when the command ends (``record_outputs``)."""
    import sys

    from judgeaudit.runfolder import claim

    p = Path(path)
    _utf8_name(p, field)
    writes = tuple(writes)
    explicit = kind is not None
    kind = kind or _default_by("") or "judgeaudit"
    if p.exists() and not p.is_dir():
        what = "an existing SQLite database (a call store or a study)" if is_sqlite(p) else "an existing file"
        raise InputError(f"is {what}; a folder is expected here", path=p, field=field)
    _check_parents(p, field, itself=True)
    ins = _inputs(inputs)
    for src in ins:
        if src.is_dir() and same_file(p, src):
            raise InputError(f"is this command's input {src}; refusing to write into it — choose another folder",
                             path=p, field=field)
    for name in writes:
        target = p / name
        if target.is_dir():
            raise InputError(f"{target} is a folder; the command writes a file there", path=p, field=field)
        for src in ins:
            if same_file(target, src):
                raise InputError(f"would write {target} over this command's input {src}", path=p, field=field)
    how = claim(p, kind, writes, field=field)
    if explicit and not quiet:
        what = "a new folder" if how == "new" else f"replacing its earlier {kind} run as one set"
        print(f"{kind}: writing into {p}: {what}", file=sys.stderr)
    _claim("folder", p, kind, writes)
    return p


def spec_inputs(specs: Iterable[object]) -> list[Path]:
    """The files judge specs read (``replay:PATH?…``, as a string or a mapping's ``spec``)."""
    out = []
    for spec in specs:
        text = spec.get("spec") if isinstance(spec, dict) else spec
        if isinstance(text, str) and text.startswith("replay:"):
            out.append(Path(name_of(text.removeprefix("replay:"))))
    return out


def set_inputs(specs: Iterable[str]) -> list[Path]:
    """The files or folders data-set specs (``NAME:PATH?…``) read."""
    return [Path(name_of(spec.split(":", 1)[1])) for spec in specs if ":" in spec]
