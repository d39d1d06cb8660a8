"""judgeaudit: audit LLM-as-a-judge instruments for validity, not just reliability."""

from judgeaudit.errors import InputError
from judgeaudit.records import Item, JudgeRequest, PairwiseItem, Probe, Verdict

__version__ = "0.1.0"

__all__ = ["InputError", "Item", "JudgeRequest", "PairwiseItem", "Probe", "Verdict", "__version__"]
