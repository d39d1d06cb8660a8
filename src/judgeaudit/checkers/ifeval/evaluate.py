"""IFEval items, strict and loose checking, and the four published accuracies.

Definitions (google-research ``instruction_following_eval/evaluation_lib.py``; Zhou et al. 2023,
§3):

* **strict**: an instruction is followed when the response is not blank and the instruction's
  rule accepts the response as written.
* **loose**: followed when the rule accepts any of eight variants of the response — the response,
  and the response without its first line, without its last line, and without both (each
  stripped), each as is and with every ``*`` removed — that is not blank.
* **prompt level**: a prompt counts when every one of its instructions is followed; the fraction
  is over prompts. **instruction level**: the fraction is over all instructions of all prompts
  (pooled, not a mean of per-prompt fractions).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from judgeaudit.checkers.base import CheckResult, Fraction, UnitResult
from judgeaudit.checkers.ifeval.instructions import INSTRUCTIONS, bind
from judgeaudit.errors import InputError

Mode = Literal["strict", "loose"]


@dataclass(frozen=True)
class IFEvalItem:
    """One IFEval prompt: its key, text, instruction ids and their bound parameters."""

    key: int
    prompt: str
    instruction_ids: tuple[str, ...]
    args: tuple[Mapping[str, Any], ...]


def make_item(obj: Mapping[str, Any]) -> IFEvalItem:
    """An :class:`IFEvalItem` from one ``input_data.jsonl`` object (``InputError`` naming the
    field for a missing field, an unknown instruction id or a parameter of the wrong type)."""
    for name in ("key", "prompt", "instruction_id_list", "kwargs"):
        if name not in obj:
            raise InputError("required field is missing", field=name)
    key, prompt, ids, kwargs = obj["key"], obj["prompt"], obj["instruction_id_list"], obj["kwargs"]
    if isinstance(key, bool) or not isinstance(key, int):
        raise InputError(f"must be an integer, got {key!r}", field="key")
    if not isinstance(prompt, str):
        raise InputError(f"must be a string, got {prompt!r}", field="prompt")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise InputError("must be a non-empty list of instruction ids", field="instruction_id_list")
    if not isinstance(kwargs, list) or len(kwargs) != len(ids):
        raise InputError(f"must be a list of {len(ids)} parameter objects, one per instruction", field="kwargs")
    for i, iid in enumerate(ids):
        if iid not in INSTRUCTIONS:
            raise InputError(f"unknown instruction id {iid!r}", field=f"instruction_id_list[{i}]")
    args = tuple(bind(iid, kw, field=f"kwargs[{i}]") for i, (iid, kw) in enumerate(zip(ids, kwargs, strict=True)))
    return IFEvalItem(key=key, prompt=prompt, instruction_ids=tuple(ids), args=args)


def loose_variants(response: str) -> tuple[str, ...]:
    """The eight texts the loose check tries, in the released order."""
    lines = response.split("\n")
    no_first = "\n".join(lines[1:]).strip()
    no_last = "\n".join(lines[:-1]).strip()
    no_both = "\n".join(lines[1:-1]).strip()
    return (response, response.replace("*", ""), no_first, no_last, no_both,
            no_first.replace("*", ""), no_last.replace("*", ""), no_both.replace("*", ""))


def follows(instruction_id: str, args: Mapping[str, Any], response: str, mode: Mode = "strict") -> bool:
    """Whether ``response`` follows one instruction, strictly or loosely."""
    rule = INSTRUCTIONS[instruction_id]
    texts = (response,) if mode == "strict" else loose_variants(response)
    return any(t.strip() and rule.check(t, args) for t in texts)


def unit_id(index: int, instruction_id: str) -> str:
    """The unit id of an item's ``index``-th instruction (``"0:punctuation:no_comma"``)."""
    return f"{index}:{instruction_id}"


def check_ifeval(item: IFEvalItem, response: str, *, mode: Mode = "strict") -> CheckResult:
    """Per-instruction pass/fail of ``response`` to ``item`` (units in the item's order)."""
    if mode not in ("strict", "loose"):
        raise InputError(f"mode must be strict or loose, got {mode!r}", field="mode")
    units = tuple(UnitResult(unit_id(i, iid), follows(iid, a, response, mode))
                  for i, (iid, a) in enumerate(zip(item.instruction_ids, item.args, strict=True)))
    return CheckResult(item=str(item.key), units=units)


@dataclass(frozen=True)
class IFEvalScores:
    """The four accuracies of Zhou et al. (2023), each with its counts."""

    prompt_level_strict: Fraction
    instruction_level_strict: Fraction
    prompt_level_loose: Fraction
    instruction_level_loose: Fraction

    def to_dict(self) -> dict[str, dict[str, float | int]]:
        return {k: getattr(self, k).to_dict() for k in
                ("prompt_level_strict", "instruction_level_strict", "prompt_level_loose", "instruction_level_loose")}


def score(strict: Sequence[CheckResult], loose: Sequence[CheckResult]) -> IFEvalScores:
    """Prompt-level and (pooled) instruction-level accuracies of matched strict/loose results."""
    def level(results: Iterable[CheckResult]) -> tuple[Fraction, Fraction]:
        rs = list(results)
        return (Fraction(sum(r.passed for r in rs), len(rs)),
                Fraction(sum(r.n_passed for r in rs), sum(len(r.units) for r in rs)))

    ps, is_ = level(strict)
    pl, il = level(loose)
    return IFEvalScores(ps, is_, pl, il)
