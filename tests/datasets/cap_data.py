"""Locations of the full public sets (JUDGEAUDIT_DATA_DIR), the trimmed bundled copies, and the package's own
JudgeBench-format fixture (self-written pairs and simulated judges; JudgeBench itself is not shipped)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import judgeaudit

BUNDLED = Path(judgeaudit.__file__).parent / "data"
FIXTURE = BUNDLED / "judgebench_fixture"


def full(name: str) -> Path:
    root = os.environ.get("JUDGEAUDIT_DATA_DIR")
    if not root:
        pytest.skip(f"JUDGEAUDIT_DATA_DIR is not set: the full {name} data set is needed")
    p = Path(root) / name
    if not p.is_dir():
        pytest.skip(f"{p} does not exist")
    return p
