"""A planted in-process judge that answers every verdict form the demo's runs ask (graded, world label,
generate), in milliseconds, with verdicts that are known functions of the request: a stand-in for the
embedded Gemma judge when a test builds the demo's run folders.

* graded (validity): an original scores 2; an edit on a control slot scores 2 except for the edits whose id
  hashes into ``CONTROL_MOVES`` of 64 (then 8); an edit on a construct slot scores 8 except for the edits
  whose id hashes into ``CONSTRUCT_MISSES`` of 64 (then 2). It reads the slot from ``meta``, which a judge
  under audit never does: this one is planted to be sensitive, so the gate has a known judge to pass.
* world label: the gold label (``meta['gold']``, as ``reference:oracle`` reads it) when the world is shown,
  except for the answers whose id hashes into ``WORLD_MISSES`` of 64 (then the opposite); "not defective"
  when blind.
* generate (loop): a report that names no violation, and a revision that returns the output unchanged.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from typing import Any

import pytest

from judgeaudit.judges import base
from judgeaudit.judges.base import JudgeSpec
from judgeaudit.judges.python import PythonJudge
from judgeaudit.probes.taxonomy import SLOT_BY_NAME
from judgeaudit.records import JudgeRequest, Verdict

SPEC = "planted:demo"
CONTROL_MOVES, CONSTRUCT_MISSES, WORLD_MISSES = 2, 12, 6
REPORT = json.dumps({"defective": False, "defects": [], "violated": []})


def _bucket(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % 64


def verdict_of(request: JudgeRequest) -> Any:
    """The planted verdict of a graded or world request (see the module docstring)."""
    if request.form == "graded":
        slot = request.meta.get("slot")
        if slot is None:                                    # a base item's original
            return 2
        if SLOT_BY_NAME[slot].axis == "control":
            return 8 if _bucket(request.request_id) < CONTROL_MOVES else 2
        return 2 if _bucket(request.request_id) < CONSTRUCT_MISSES else 8
    gold = bool(request.meta["gold"]["defective"])
    if not request.meta.get("world_shown"):
        return False
    return (not gold) if _bucket(str(request.meta.get("item_id"))) < WORLD_MISSES else gold


class PlantedDemoJudge(PythonJudge):
    """``verdict_of`` for graded and world requests (read as a ``python:`` judge's returns), the loop's
    replies for generate requests."""

    def __init__(self, spec_id: str):
        super().__init__(JudgeSpec(id=spec_id, backend="planted", model="planted-demo", template_version="1"),
                         verdict_of)

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        if request.form != "generate":
            return await super().judge_one(request)
        raw = request.meta["output"] if "output" in request.meta else REPORT
        return self.make_verdict(request, raw=raw, parse_ok=True, provider="planted", cost_usd=0.0)


def _factory(argument: str, options: dict[str, Any]) -> PlantedDemoJudge:
    return PlantedDemoJudge(options["id"])


@contextmanager
def planted_backend():
    """Inside, ``make_judge("planted:demo")`` builds the planted judge (the registry entry is removed after)."""
    with base.BACKENDS.override("planted", base.Backend(_factory, "a planted test judge")):
        yield
