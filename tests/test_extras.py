"""The ``all`` extra installs every other optional extra, pin for pin."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def test_all_holds_every_pin_of_every_other_extra():
    extras = _extras()
    everything = set(extras.pop("all"))
    assert extras, "no other extras found"
    missing = {name: sorted(set(pins) - everything) for name, pins in extras.items() if set(pins) - everything}
    assert missing == {}


def test_all_holds_nothing_beyond_the_other_extras():
    extras = _extras()
    everything = set(extras.pop("all"))
    assert sorted(everything - set().union(*extras.values())) == []
