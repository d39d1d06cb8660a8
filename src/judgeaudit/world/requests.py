"""World requests: one per (item, arm, vote), built from an arm's delivery.

``request_id`` is ``ITEM::ARM``; the vote is the ``epoch`` (0..K-1), so each vote is its own call
key. ``meta`` carries the arm, whether the true world is shown (``world_shown``), what the arm
recorded (placebo source, world position, routed sentences) and the gold defects under
``meta['gold']`` (``defective``, ``unit_labels``, ``defect_ids``, ``quotes``) for reference
instruments such as ``reference:oracle``; the world templates never render ``meta`` except the
procedure step.
"""

from __future__ import annotations

from judgeaudit.analyses.world.analysis import SEP  # noqa: F401 - the request id separator, named here too
from judgeaudit.errors import InputError
from judgeaudit.judges.elicit import WORLD_TEMPLATE
from judgeaudit.records import JudgeRequest, WorldItem, kind_ids
from judgeaudit.world import forms as _forms  # noqa: F401 - registers the world template family
from judgeaudit.world.arms import ArmContext, get_arm
from judgeaudit.world.templates import WORLD_FORMS


def arm_of(request_id: str) -> str:
    """The arm of a world request (``ITEM::ARM``)."""
    return request_id.rpartition(SEP)[2]


def check_spans(item: WorldItem) -> None:
    """Every gold span and unit offset must lie inside the output text."""
    n = len(item.output)
    for s in item.spans:
        if not 0 <= s.start < s.end <= n:
            raise InputError(f"item {item.item_id!r}: span [{s.start}, {s.end}) lies outside the output "
                             f"({n} characters)", field="spans")
    for u in item.units:
        if u.start is not None and u.end is not None and not 0 <= u.start <= u.end <= n:
            raise InputError(f"item {item.item_id!r}: unit {u.unit_id!r} [{u.start}, {u.end}) lies outside "
                             f"the output ({n} characters)", field="units")


def taxonomy_of(items: list[WorldItem]) -> tuple[str, ...]:
    """The requirement/defect types the set's units name (sorted; discovered, not listed)."""
    return tuple(sorted({k for it in items for u in it.units for k in kind_ids(u.kind)}))


def gold_of(item: WorldItem) -> dict:
    """The gold a reference instrument reads from ``meta['gold']``: ``judges.reference.gold_meta``
    where this install has it, with the quoted gold segments added (``quotes``)."""
    try:
        from judgeaudit.judges.reference import gold_meta
    except ImportError:
        base = {"defective": item.defective, "unit_labels": [u.defective for u in item.units],
                "defect_ids": sorted({k for u in item.units if u.defective for k in kind_ids(u.kind)})}
    else:
        base = gold_meta(item)
    return {**base, "quotes": [item.output[s.start:s.end] for s in item.spans]}


def build_request(item: WorldItem, arm: str, ctx: ArmContext, *, form: str, epoch: int = 0) -> JudgeRequest:
    if form not in WORLD_FORMS:
        raise InputError(f"unknown form {form!r}; choose from {', '.join(WORLD_FORMS)}", field="--form")
    d = get_arm(arm)(item, ctx)
    units = None
    if form == "sentences":
        if not item.units:
            raise InputError(f"item {item.item_id!r} has no units for the sentences form", field="units")
        units = [u.text for u in item.units]
    elif form == "typed":
        units = list(ctx.taxonomy)
        if not units:
            raise InputError("the typed form needs unit kinds (a requirement taxonomy); the set has none",
                             field="--form")
    meta = {"template": WORLD_TEMPLATE, "arm": arm, "item_id": item.item_id, "world_shown": d.world_shown,
            "gold": gold_of(item), **d.meta}
    if d.procedure is not None:
        meta["procedure"] = d.procedure
    return JudgeRequest(request_id=f"{item.item_id}{SEP}{arm}", form=form, text=item.output, evidence=d.evidence,
                        criterion=d.criterion, question=d.question, reference=d.reference, units=units,
                        epoch=epoch, meta=meta)


def build_requests(items: list[WorldItem], arms: list[str], ctx: ArmContext, *, form: str,
                   votes: int) -> list[JudgeRequest]:
    """Every (item, arm, vote) request, item-major (spans checked first)."""
    for it in items:
        check_spans(it)
    return [build_request(it, arm, ctx, form=form, epoch=v) for it in items for arm in arms for v in range(votes)]
