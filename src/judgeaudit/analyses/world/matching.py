"""The generous matcher backed by a judge (blind-spot §3.6: "a small language model decide[s]
whether a claimed defect identifies the segment"; model and prompt unspecified).

Every (complaint, marked segment) pair to be decided is asked once, as a ``generate`` request
(``pair_requests``; the command edge sends them through the call store); the reply is read as yes when its first word is "yes" (case-insensitive),
no when it is "no"; any other reply (or a failed call) leaves the pair *undecided*: the matcher
returns None, which the scorers count apart and never read as "no match" (``JudgeMatcher.undecided``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from judgeaudit.analyses.world.scoring import segments
from judgeaudit.analyses.world.segments import sentence_units
from judgeaudit.records import JudgeRequest, WorldItem

PROMPT = (
    "An output was marked as having an error in one segment. A reviewer made a complaint about the output.\n"
    "Decide whether the complaint identifies the marked segment (points at it or at the error it contains).\n\n"
    "Output:\n{output}\n\nMarked segment:\n{segment}\n\nComplaint quote:\n{quote}\n\nComplaint reason:\n{reason}\n\n"
    "Answer with one word: yes or no.\nAnswer:"
)
_WORD_RE = re.compile(r"[A-Za-z]+")


def _key(item_id: str, complaint: dict, segment: str) -> str:
    raw = "\x1f".join([item_id, complaint.get("span") or "", complaint.get("reason") or "", segment])
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def pair_requests(items: list[WorldItem], complaints: list[tuple[str, dict]]) -> list[JudgeRequest]:
    """One request per distinct (item, complaint, segment) among ``complaints`` (item id, complaint); the
    segments are the item's marked segments and its labelled sentences (the sentence-level route)."""
    by_id = {it.item_id: it for it in items}
    out: dict[str, JudgeRequest] = {}
    for item_id, c in complaints:
        it = by_id[item_id]
        for seg in dict.fromkeys([*segments(it), *(u.text for u in sentence_units(it))]):
            k = _key(item_id, c, seg)
            if k not in out:
                out[k] = JudgeRequest(request_id=k, form="generate", prompt=PROMPT.format(
                    output=it.output, segment=seg, quote=c.get("span") or "", reason=c.get("reason") or ""))
    return list(out.values())


def read_yes_no(text: str | None) -> bool | None:
    m = _WORD_RE.search(text or "")
    word = m.group().lower() if m else ""
    return True if word == "yes" else False if word == "no" else None


@dataclass
class JudgeMatcher:
    """A matcher answering from the judge's replies to ``pair_requests`` (read with ``read_yes_no``),
    keyed by request id (``commands.world.judge_pairs`` gathers them through the call store)."""

    answers: dict[str, bool | None] = field(default_factory=dict)

    @property
    def undecided(self) -> int:
        return sum(v is None for v in self.answers.values())

    def __call__(self, complaint: dict, segment: str, item: WorldItem) -> bool | None:
        return self.answers.get(_key(item.item_id, complaint, segment))
