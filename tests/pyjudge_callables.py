"""Callables used as ``python:`` judges by the tests (importable by Ray workers: this folder is put on
their PYTHONPATH). Each is a scripted judge whose verdict is a known function of the request."""

from __future__ import annotations

import asyncio
import re
import threading

CALLS: list[str] = []
_LOCK = threading.Lock()
TEXTS = ["a", "bb claim", "the drug always works", "x" * 17, "short", "a longer claim about trials", "q" * 9, "z"]
"""The texts of ``graded_requests``, in turn."""


def graded_requests(n: int = 8) -> list:
    """``n`` graded requests r0, r1, … over ``TEXTS`` (their grade by ``grade``: ``expected_grade(text)``)."""
    from judgeaudit.records import JudgeRequest

    return [JudgeRequest(request_id=f"r{i}", text=TEXTS[i % len(TEXTS)], evidence="ev") for i in range(n)]


def expected_grade(text: str) -> int:
    return 1 + len(text) % 9


def _seen(request) -> None:
    with _LOCK:
        CALLS.append(request.request_id)


def grade(request):
    """graded: 1 + len(text) mod 9; pairwise: the longer response (A on a tie of lengths)."""
    _seen(request)
    if request.form == "pairwise":
        return "A" if len(request.response_a or "") >= len(request.response_b or "") else "B"
    return expected_grade(request.text or "")


async def agrade(request):
    await asyncio.sleep(0)
    return grade(request)


def as_dict(request):
    return {"score": float(expected_grade(request.text or "")), "raw": f"my reply for {request.request_id}",
            "rationale": "counted the characters"}


def find_defects(request):
    """defects: every word 'always' quoted."""
    return [{"quote": "always", "reason": "overgeneralises"}] if "always" in (request.text or "") else []


BAD = {"r0": "seven", "r1": None, "r2": True, "r3": 12, "r4": {"score": "x"}, "r5": {"verdict": 3},
       "r6": float("nan"), "r7": 4}


def bad(request):
    """Returns what is not a graded verdict for every id but r7."""
    return BAD[request.request_id]


def boom(request):
    raise RuntimeError(f"cannot judge {request.request_id}")


def _unsupported(text: str, world: str | None) -> bool:
    """Whether a number or a capitalised word of ``text`` is absent from the world (always False when blind)."""
    if world is None:
        return False
    return any(w.lower() not in world.lower() for w in re.findall(r"\d+|[A-Z][a-z]+", text))


def world(request):
    """The world forms: a text is flagged when a number or name in it is not in the world block shown."""
    flagged = _unsupported(request.text or "", request.evidence)
    if request.form == "label":
        return flagged
    if request.form == "sentences":
        return {"labels": [_unsupported(u, request.evidence) for u in request.units or []]}
    if request.form == "score":
        return {"score": 1 if flagged else 5}
    if request.form == "defects":
        return {"defects": [{"quote": "always", "reason": "unsupported"}] if flagged else []}
    return {"defect_ids": []}


NOT_CALLABLE = 3


def rate10(request):
    """A 1–10 quality rating (higher = better): 2 for a construct-changing edit of a validity probe, 8 for an
    original or a construct-preserving edit, else ``request.meta['rating']``."""
    from judgeaudit.probes.taxonomy import SLOT_BY_NAME

    if "rating" in request.meta:
        return request.meta["rating"]
    slot = request.meta.get("slot")
    return 2 if slot is not None and SLOT_BY_NAME[slot].axis != "control" else 8


def rate10_declared(request):
    return rate10(request)


rate10_declared.judge_scale = "1,10"


def passes(request):
    """pass/fail: True (pass) unless the text says 'always'."""
    return "always" not in (request.text or "")


passes.judge_scale = "pass_fail"


def badly_declared(request):
    return 5


badly_declared.judge_scale = (1, 2.5)


def np_int(request):
    """graded: the expected grade as a numpy.int64; pairwise: a numpy.str_."""
    import numpy as np

    if request.form == "pairwise":
        return np.str_(grade(request))
    return np.int64(expected_grade(request.text or ""))


def np_float(request):
    import numpy as np

    return np.float64(expected_grade(request.text or ""))


def np_dict(request):
    import numpy as np

    return {"score": np.int32(expected_grade(request.text or "")), "rationale": np.str_("numpy")}


def np_passes(request):
    """pass/fail as a numpy.bool_ (a comparison of numpy values gives one)."""
    import numpy as np

    return np.bool_("always" not in (request.text or ""))


np_passes.judge_scale = "pass_fail"


def np_world(request):
    """A world label as numpy.bool_ and a world score as numpy.int64."""
    import numpy as np

    flagged = np.bool_("always" in (request.text or ""))
    return {"score": np.int64(1 if flagged else 5)} if request.form == "score" else flagged


def exits(request):
    import sys

    sys.exit(3)


async def aexits(request):
    import sys

    sys.exit("stop")
