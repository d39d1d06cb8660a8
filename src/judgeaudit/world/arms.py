"""Arms: what the judge is shown (blind-spot §3.3, §5, §6). Each arm is a small pure function
``(item, context) -> Delivery`` registered in ``ARMS``; the runner turns a delivery into a request.

The blocks an arm sets are the question, the world (``evidence``), the reference, the rubric
(``criterion``; None = the template's default rubric) and an optional procedure step. Everything
else in the prompt is the template's and identical across arms (``world.templates``).

On IFEval the paper's paired blind arm "receives the constraint taxonomy in place of the instruction"
(§3.3): that is ``taxonomy`` (the output and a rubric naming the set's constraint types, no
instruction), paired with ``informed+typed`` (the same rubric and the instruction); ``blind`` and
``informed`` are the untyped pair (no rubric beyond the template's).

Defaults that the paper leaves open (recorded here, parameters of ``ArmContext``):
* the blind arm shows the question on the tasks where the deployed judge sees it
  (``QUESTION_IN_BLIND``: HaluEval QA and dialogue, §3.3 table); ``blind+question`` always shows it,
  ``answer-alone`` never;
* placebo: among the ``placebo_pool`` items of the same task whose world length is nearest, one drawn
  with a seed derived from (seed, item id);
* dilution: ``k`` other worlds of the same task drawn with that seed, the true world at a seeded
  position (1-based, recorded as ``world_position``);
* routed: output and world split into sentences; for each output sentence the ``top_k`` world
  sentences of highest cosine similarity under the encoder (default the MiniLM encoder of
  ``reference:similarity``), shown in source order.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judgeaudit.analyses.world.factorial import cell_name
from judgeaudit.errors import InputError
from judgeaudit.records import WorldItem

QUESTION_IN_BLIND = frozenset({"qa", "dialogue"})
Encoder = Callable[[list[str]], np.ndarray]


def default_encoder(texts: list[str]) -> np.ndarray:
    """Unit-normalised MiniLM embeddings (the encoder ``reference:similarity`` uses)."""
    from judgeaudit.judges.reference import embedder

    return np.asarray(embedder().encode(texts, normalize_embeddings=True, batch_size=64))


_SENT_RE = re.compile(r"(?<=[.!?])\s+(?=\S)")


def sentences(text: str) -> list[str]:
    """Split text into sentences at ., ! or ? followed by white space (blank pieces dropped)."""
    return [s.strip() for s in _SENT_RE.split(text.strip()) if s.strip()]


@dataclass(frozen=True)
class ArmContext:
    """What an arm may draw on besides the item: the other items (placebo and distractor worlds),
    a seed, the encoder for routing, the routing depth and the requirement taxonomy."""

    pool: tuple[WorldItem, ...] = ()
    seed: int = 0
    encoder: Encoder | None = None
    top_k: int = 5
    placebo_pool: int = 5
    taxonomy: tuple[str, ...] = ()


@dataclass(frozen=True)
class Delivery:
    """The blocks an arm fills, and what it records about them."""

    question: str | None = None
    evidence: str | None = None
    reference: str | None = None
    criterion: str | None = None
    procedure: str | None = None
    world_shown: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


def _rng(ctx: ArmContext, item: WorldItem, salt: str) -> np.random.Generator:
    h = int(hashlib.sha256(f"{ctx.seed}\x00{salt}\x00{item.item_id}".encode()).hexdigest()[:16], 16)
    return np.random.default_rng(h)


def need_world(item: WorldItem, arm: str) -> str:
    if not item.world:
        raise InputError(f"item {item.item_id!r} has no world, which the {arm!r} arm shows", field="world")
    return item.world


def need_reference(item: WorldItem, arm: str) -> str:
    if not item.reference:
        raise InputError(f"item {item.item_id!r} has no reference, which the {arm!r} arm shows",
                         field="reference")
    return item.reference


def _blind_question(item: WorldItem) -> str | None:
    return item.question if item.task in QUESTION_IN_BLIND else None


def _others(item: WorldItem, ctx: ArmContext) -> list[WorldItem]:
    """Items of the same task with another world (and not from the same source item)."""
    return [o for o in ctx.pool if o.task == item.task and o.world and o.world != item.world
            and o.item_id != item.item_id and (o.group is None or o.group != item.group)]


DEFAULT_TAXONOMY = ("contradicted by the source", "unsupported by the source", "violated instruction",
                    "reasoning or arithmetic error", "self-contradiction")
"""The types a typed rubric names when the set's units name none (the paper leaves T's content open)."""


def typed_rubric(ctx: ArmContext) -> str:
    """The rubric of the typed arms: the set's own unit kinds, else ``DEFAULT_TAXONOMY``."""
    return "Requirement types (report defects by type): " + ", ".join(ctx.taxonomy or DEFAULT_TAXONOMY) + "."


# --- the arms -------------------------------------------------------------------------------------------


def blind(item: WorldItem, ctx: ArmContext) -> Delivery:
    return Delivery(question=_blind_question(item))


def informed(item: WorldItem, ctx: ArmContext) -> Delivery:
    return Delivery(question=_blind_question(item), evidence=need_world(item, "informed"), world_shown=True)


def blind_question(item: WorldItem, ctx: ArmContext) -> Delivery:
    return Delivery(question=item.question)


def answer_alone(item: WorldItem, ctx: ArmContext) -> Delivery:
    return Delivery()


def placebo(item: WorldItem, ctx: ArmContext) -> Delivery:
    need_world(item, "placebo")
    others = _others(item, ctx)
    if not others:
        raise InputError(f"item {item.item_id!r}: no other item of task {item.task!r} has a world for a placebo",
                         field="world")
    n = len(item.world or "")
    nearest = sorted(others, key=lambda o: (abs(len(o.world or "") - n), o.item_id))[: ctx.placebo_pool]
    pick = nearest[int(_rng(ctx, item, "placebo").integers(len(nearest)))]
    return Delivery(question=_blind_question(item), evidence=pick.world, world_shown=False,
                    meta={"placebo_from": pick.item_id})


def dilution(k: int) -> Callable[[WorldItem, ArmContext], Delivery]:
    def arm(item: WorldItem, ctx: ArmContext) -> Delivery:
        world = need_world(item, f"dilution-{k}")
        worlds = sorted({o.world for o in _others(item, ctx)})
        if len(worlds) < k:
            raise InputError(f"item {item.item_id!r}: dilution-{k} needs {k} other worlds of task "
                             f"{item.task!r}, the set has {len(worlds)}", field="world")
        rng = _rng(ctx, item, f"dilution-{k}")
        docs = [worlds[i] for i in rng.choice(len(worlds), size=k, replace=False)]
        position = int(rng.integers(k + 1))
        docs.insert(position, world)
        body = "\n\n".join(f"[Document {i}]\n{d}" for i, d in enumerate(docs, 1))
        return Delivery(question=_blind_question(item), evidence=body, world_shown=True,
                        meta={"world_position": position + 1, "n_documents": k + 1})

    arm.__name__ = f"dilution_{k}"
    return arm


def reference_only(item: WorldItem, ctx: ArmContext) -> Delivery:
    return Delivery(question=_blind_question(item), reference=need_reference(item, "reference-only"))


def world_reference(item: WorldItem, ctx: ArmContext) -> Delivery:
    return Delivery(question=_blind_question(item), evidence=need_world(item, "world+reference"),
                    reference=need_reference(item, "world+reference"), world_shown=True)


def routed_indices(claims: list[str], world_sents: list[str], k: int, encoder: Encoder) -> list[int]:
    """Indices (in source order) of the union over claims of the ``k`` nearest world sentences."""
    if not claims or not world_sents:
        return []
    vecs = np.asarray(encoder(claims + world_sents), dtype=float)
    sims = vecs[: len(claims)] @ vecs[len(claims):].T
    k = min(k, len(world_sents))
    # stable: ties broken by source order
    top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    return sorted({int(i) for i in top.ravel()})


def routed(item: WorldItem, ctx: ArmContext) -> Delivery:
    world_sents = sentences(need_world(item, "routed"))
    idx = routed_indices(sentences(item.output), world_sents, ctx.top_k, ctx.encoder or default_encoder)
    return Delivery(question=_blind_question(item), evidence="\n".join(world_sents[i] for i in idx),
                    world_shown=True, meta={"routed_sentences": idx, "world_sentences": len(world_sents)})


def numbered(item: WorldItem, ctx: ArmContext) -> Delivery:
    sents = sentences(need_world(item, "numbered-cite"))
    body = "\n".join(f"[{i}] {s}" for i, s in enumerate(sents, 1))
    return Delivery(question=_blind_question(item), evidence=body, procedure="cite", world_shown=True)


def restate(item: WorldItem, ctx: ArmContext) -> Delivery:
    return Delivery(question=_blind_question(item), evidence=need_world(item, "restate"), procedure="restate",
                    world_shown=True)


def restate_control(item: WorldItem, ctx: ArmContext) -> Delivery:
    return Delivery(question=_blind_question(item), evidence=need_world(item, "restate-control"),
                    procedure="restate-rubric", world_shown=True)


def restate_blind(item: WorldItem, ctx: ArmContext) -> Delivery:
    return Delivery(question=_blind_question(item), procedure="restate-blind")


def taxonomy(item: WorldItem, ctx: ArmContext) -> Delivery:
    return Delivery(question=_blind_question(item), criterion=typed_rubric(ctx))


def informed_typed(item: WorldItem, ctx: ArmContext) -> Delivery:
    return Delivery(question=_blind_question(item), evidence=need_world(item, "informed+typed"),
                    criterion=typed_rubric(ctx), world_shown=True)


def strengthened_blind(item: WorldItem, ctx: ArmContext) -> Delivery:
    return Delivery(question=_blind_question(item), procedure="self-contradiction")


def factor_arm(question: bool, source: bool, typed: bool) -> Callable[[WorldItem, ArmContext], Delivery]:
    """The factorial cell (Q, S, T) (§6): question shown, source shown, requirements typed."""
    name = cell_name(question, source, typed)

    def arm(item: WorldItem, ctx: ArmContext) -> Delivery:
        return Delivery(question=item.question if question else None,
                        evidence=need_world(item, name) if source else None,
                        criterion=typed_rubric(ctx) if typed else None, world_shown=source)

    arm.__name__ = name
    return arm


ARMS: dict[str, Callable[[WorldItem, ArmContext], Delivery]] = {
    "blind": blind,
    "informed": informed,
    "blind+question": blind_question,
    "answer-alone": answer_alone,
    "placebo": placebo,
    "dilution-2": dilution(2),
    "dilution-5": dilution(5),
    "dilution-10": dilution(10),
    "reference-only": reference_only,
    "world+reference": world_reference,
    "routed": routed,
    "numbered-cite": numbered,
    "restate": restate,
    "restate-control": restate_control,
    "restate-blind": restate_blind,
    "taxonomy": taxonomy,
    "informed+typed": informed_typed,
    "strengthened-blind": strengthened_blind,
}
for _q in (False, True):
    for _s in (False, True):
        for _t in (False, True):
            ARMS[cell_name(_q, _s, _t)] = factor_arm(_q, _s, _t)


def get_arm(name: str) -> Callable[[WorldItem, ArmContext], Delivery]:
    if name not in ARMS:
        raise InputError(f"unknown arm {name!r}; choose from {', '.join(ARMS)}", field="--arm")
    return ARMS[name]
