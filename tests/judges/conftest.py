from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def small_probes(tmp_path_factory) -> Path:
    """The bundled probes of the first six base items (every slot of each): the smallest validity slice."""
    from judgeaudit.probes.io import bundled_probes_path

    lines = bundled_probes_path().read_text().splitlines()
    bases = list(dict.fromkeys(json.loads(x)["base_id"] for x in lines))[:6]
    path = tmp_path_factory.mktemp("probes") / "probes.jsonl"
    path.write_text("\n".join(x for x in lines if json.loads(x)["base_id"] in bases) + "\n")
    return path
