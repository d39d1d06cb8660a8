"""judgeaudit: audit LLM-as-a-judge instruments for validity, not just reliability.

The public names below are re-exported lazily, so ``import judgeaudit`` stays fast.
"""

from __future__ import annotations

from judgeaudit import _startup  # noqa: F401 - first: Ctrl-C while the command line loads is one line

from importlib import import_module  # noqa: E402
from typing import Any

from judgeaudit.errors import InputError
from judgeaudit.records import Item, JudgeRequest, PairwiseItem, Probe, Verdict

__version__ = "0.1.0"

_LAZY = {
    "make_judge": "judgeaudit.judges.base",
    "JudgeSpec": "judgeaudit.judges.base",
    "CallStore": "judgeaudit.runtime.store",
    "run": "judgeaudit.runtime.executor",
    "read_probes": "judgeaudit.probes.io",
    "graded_requests": "judgeaudit.probes.design",
    "validity_profile": "judgeaudit.analyses.validity",
    "audit_validation_power": "judgeaudit.analyses.validation_power",
    "cap_profile": "judgeaudit.analyses.cap",
    "direction_agreement": "judgeaudit.analyses.agreement",
    "load_set": "judgeaudit.datasets.registry",
    "calibrate": "judgeaudit.analyses.calibrate",
    "load_policy": "judgeaudit.gate",
    "evaluate_policy": "judgeaudit.gate",
}

__all__ = ["InputError", "Item", "JudgeRequest", "PairwiseItem", "Probe", "Verdict", "__version__", "card", *_LAZY]


def __getattr__(name: str) -> Any:
    if name == "card":   # the package judgeaudit.card, callable: judgeaudit.card(judge, from_dirs, out, ...)
        return import_module("judgeaudit.card")
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'judgeaudit' has no attribute {name!r}")
