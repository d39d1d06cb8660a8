"""Small helpers several test modules share: an optional package's guard, the calls a store holds, and a
small paired label set."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interruptible(args: list[str], **kwargs: object) -> subprocess.Popen:
    """``subprocess.Popen(args, **kwargs)`` with SIGINT at its default in the child, whatever the test runner
    inherited: a runner started from a non-interactive background job (``cmd &``, ``nohup``) has SIGINT
    ignored, a disposition its children inherit and that judgeaudit rightly honours; a test that sends
    SIGINT must not depend on how it was launched. (``restore_signals`` resets only SIGPIPE, SIGXFZ and
    SIGXFSZ.)"""
    return subprocess.Popen(args, preexec_fn=_sigint_default, **kwargs)  # noqa: PLW1509 - only a signal reset


def require(module: str, msg: str) -> None:
    """Skip the test when ``module`` is not installed (``msg`` says how to install it); under CI, fail."""
    if importlib.util.find_spec(module) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)


def stored_ok(db: Path) -> int:
    """How many calls the store ``db`` holds with status ok (0 before it exists or has its table)."""
    if not db.exists():
        return 0
    con = sqlite3.connect(db, timeout=30)
    try:
        return con.execute("SELECT COUNT(*) FROM calls WHERE status='ok'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def require_ray() -> None:
    require("ray", "the Ray backend tests need ray (pip install 'judgeaudit[ray]')")


def length_pairs_file(folder: Path, n: int = 40) -> Path:
    """``folder``/pairs.jsonl: ``n`` pairs of random word strings (seed 0), the longer side preferred."""
    rng = np.random.default_rng(0)
    words = "red green blue stone river cloud light paper".split()
    lines = []
    for i in range(n):
        a = " ".join(rng.choice(words, int(rng.integers(3, 40))))
        b = " ".join(rng.choice(words, int(rng.integers(3, 40))))
        lines.append(json.dumps({"q": f"q{i}", "ra": a, "rb": b, "pref": "A" if len(a) > len(b) else "B"}))
    p = folder / "pairs.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def template_versions(folder: Path, text: str, versions: tuple[str, ...] = ("1", "2")) -> list[Path]:
    """One template file per version of ``text`` (a template whose ``version`` is ``{version}``)."""
    paths = []
    for v in versions:
        paths.append(folder / f"t{v}.yaml")
        paths[-1].write_text(text.format(version=v))
    return paths


def small_probes(tmp_path: Path, n_bases: int = 6) -> Path:
    """The bundled probes of the first ``n_bases`` base items, as a probe file in ``tmp_path``."""
    from judgeaudit.probes.io import bundled_probes_path

    keep, bases = [], []
    for line in bundled_probes_path().read_text().splitlines():
        base = json.loads(line)["base_id"]
        if base not in bases:
            if len(bases) == n_bases:
                break
            bases.append(base)
        keep.append(line)
    path = tmp_path / "probes.jsonl"
    path.write_text("\n".join(keep) + "\n")
    return path


def entry_point(*args: object, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``python -m judgeaudit.cli ARGS`` as a real process (the file's one test of the entry point): (exit code,
    stdout and stderr)."""
    p = subprocess.run([sys.executable, "-m", "judgeaudit.cli", *map(str, args)], capture_output=True, text=True,
                       env=env)
    return p.returncode, p.stdout + p.stderr
