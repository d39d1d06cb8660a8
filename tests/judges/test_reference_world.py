"""World reference instruments: oracle (gold only when the world is shown), flag-all, flag-none."""

from __future__ import annotations

import asyncio

import pytest

from judgeaudit.judges import make_judge
from judgeaudit.judges.reference import GOLD_KEY, gold_meta
from judgeaudit.records import JudgeRequest, Span, Unit, WorldItem
from judgeaudit.stats.tests import mcnemar_exact


def _request(item: WorldItem, *, informed: bool, form: str = "label", with_units: bool = False) -> JudgeRequest:
    return JudgeRequest(request_id=f"{item.item_id}/{'informed' if informed else 'blind'}", form=form,
                        text=item.output, evidence=item.world if informed else None, question=item.question,
                        units=[u.text for u in item.units] if with_units else None,
                        meta={GOLD_KEY: gold_meta(item)})


def _run(spec: str, reqs: list[JudgeRequest]):
    return asyncio.run(make_judge(spec).judge(reqs))


def _rates(truth: list[bool], flagged: list[bool]) -> tuple[float, float, float]:
    """recall, specificity and balanced accuracy of item flags against the gold labels."""
    tp = sum(t and f for t, f in zip(truth, flagged))
    tn = sum(not t and not f for t, f in zip(truth, flagged))
    pos = sum(truth)
    neg = len(truth) - pos
    recall, spec = tp / pos, tn / neg
    return recall, spec, (recall + spec) / 2


@pytest.mark.data
def test_oracle_flag_all_flag_none_on_halueval_qa(data_dir):
    from judgeaudit.datasets.world import load_world_set

    items = load_world_set(f"halueval:{data_dir / 'halueval'}?part=qa")
    truth = [bool(it.defective) for it in items]
    informed = [_request(it, informed=True) for it in items]
    blind = [_request(it, informed=False) for it in items]
    flags = {(spec, arm): [v.label for v in _run(spec, reqs)]
             for spec in ("reference:oracle", "reference:flag-all", "reference:flag-none")
             for arm, reqs in (("informed", informed), ("blind", blind))}
    assert _rates(truth, flags["reference:oracle", "informed"]) == (1.0, 1.0, 1.0)
    assert _rates(truth, flags["reference:oracle", "blind"]) == (0.0, 1.0, 0.5)
    for arm in ("informed", "blind"):
        assert _rates(truth, flags["reference:flag-all", arm]) == (1.0, 0.0, 0.5)
        assert _rates(truth, flags["reference:flag-none", arm]) == (0.0, 1.0, 0.5)
    # paired 2x2 on correctness, blind vs informed oracle: b = blind wrong & informed right
    ok_b = [f == t for f, t in zip(flags["reference:oracle", "blind"], truth)]
    ok_i = [f == t for f, t in zip(flags["reference:oracle", "informed"], truth)]
    b = sum(not x and y for x, y in zip(ok_b, ok_i))
    c = sum(x and not y for x, y in zip(ok_b, ok_i))
    assert (b, c) == (500, 0) and b == sum(truth)
    assert mcnemar_exact(b, c) == pytest.approx(2 * 0.5 ** 500)


def _frank_like() -> WorldItem:
    out = "the cat sat . the dog flew ."
    return WorldItem(item_id="x", task="summarization", output=out, world="The cat sat.", defective=True,
                     units=[Unit(unit_id="0", text="the cat sat .", start=0, end=13, defective=False),
                            Unit(unit_id="1", text="the dog flew .", start=14, end=28, defective=True,
                                 kind="EntE,OutE")],
                     spans=[Span(start=14, end=28, label="EntE,OutE")])


def test_oracle_forms_informed_and_blind():
    item = _frank_like()
    got = {}
    for form in ("label", "sentences", "typed", "defects", "score"):
        inf, bl = (_run("reference:oracle", [_request(item, informed=x, form=form, with_units=True)])[0]
                   for x in (True, False))
        got[form] = (inf, bl)
    assert (got["label"][0].label, got["label"][1].label) == (True, False)
    assert (got["sentences"][0].unit_labels, got["sentences"][1].unit_labels) == ([False, True], [False, False])
    assert (got["typed"][0].defect_ids, got["typed"][1].defect_ids) == (["EntE", "OutE"], [])
    assert [(d.span, d.reason) for d in got["defects"][0].defects] == [("the dog flew .", "gold defect: EntE,OutE")]
    assert got["defects"][1].defects == []
    assert (got["score"][0].score, got["score"][1].score) == (1.0, 5.0)
    assert all(v.parse_ok for pair in got.values() for v in pair)


def test_oracle_quotes_defective_constraints_without_spans():
    item = WorldItem(item_id="k", task="instruction", output="Hello, world", world="Do not use commas.",
                     defective=True, units=[Unit(unit_id="0:punctuation:no_comma", text="punctuation:no_comma",
                                                 defective=True, kind="punctuation:no_comma")])
    v = _run("reference:oracle", [_request(item, informed=True, form="defects", with_units=True)])[0]
    assert [(d.span, d.unit_id) for d in v.defects] == [("punctuation:no_comma", "0:punctuation:no_comma")]
    t = _run("reference:oracle", [_request(item, informed=True, form="typed", with_units=True)])[0]
    assert t.defect_ids == ["punctuation:no_comma"]


def test_flag_all_and_flag_none_forms():
    item = _frank_like()
    for spec, every in (("reference:flag-all", True), ("reference:flag-none", False)):
        out = {form: _run(spec, [_request(item, informed=False, form=form, with_units=True)])[0]
               for form in ("label", "sentences", "typed", "defects", "score")}
        assert out["label"].label is every
        assert out["sentences"].unit_labels == [every, every]
        assert out["typed"].defect_ids == (["the cat sat .", "the dog flew ."] if every else [])
        assert len(out["defects"].defects) == (2 if every else 0)
        assert out["score"].score == (1.0 if every else 5.0)


def test_oracle_needs_gold_and_world_forms():
    req = JudgeRequest(request_id="r", form="label", text="t", evidence="w")
    with pytest.raises(ValueError, match="meta\\['gold'\\]"):
        _run("reference:oracle", [req])
    with pytest.raises(ValueError, match="no graded form"):
        _run("reference:flag-all", [JudgeRequest(request_id="r", text="t")])


def test_gold_never_reaches_a_rendered_prompt_or_call_key():
    """A real judge's prompt and call key are the same with and without the gold in meta."""
    marker = "GOLD-MARKER-7f3a"
    gold = {"defective": True, "unit_labels": [True], "defect_ids": [marker],
            "spans": [{"start": 0, "end": 3, "label": marker}]}
    judge = make_judge("api:openai/gpt-4o-mini", api_base="http://127.0.0.1:9/v1")
    rendered = []
    for form in ("graded", "defects", "label", "sentences", "typed", "score"):
        base = JudgeRequest(request_id="r", form=form, text="The answer is 42.", evidence="Some world.",
                            question="What?", units=["The answer is 42."])
        with_gold = base.model_copy(update={"meta": {GOLD_KEY: gold, "note": marker}})
        try:
            text = judge.render(with_gold)
        except ValueError:  # a world form this build's templates do not render yet
            continue
        rendered.append(form)
        assert marker not in text and text == judge.render(base)
        assert judge.key(with_gold) == judge.key(base)
    assert {"graded", "defects"} <= set(rendered)
    ref = make_judge("reference:oracle")
    base = JudgeRequest(request_id="r", form="label", text="t", evidence="w")
    assert ref.key(base) == ref.key(base.model_copy(update={"meta": {GOLD_KEY: gold}}))


@pytest.mark.data
def test_sentence_forms_on_frank(data_dir):
    """Sentence level on FRANK's 3,496 determined sentences (1,162 defective): the oracle informed
    is exact, blind flags nothing; flag-all's precision is the defect share 1162/3496."""
    from judgeaudit.datasets.world import load_world_set

    items = load_world_set(f"frank:{data_dir / 'frank'}")
    truth = [bool(u.defective) for it in items for u in it.units]
    assert (len(truth), sum(truth)) == (3496, 1162)
    out = {}
    for spec in ("reference:oracle", "reference:flag-all", "reference:flag-none"):
        for informed in (True, False):
            vs = _run(spec, [_request(it, informed=informed, form="sentences", with_units=True) for it in items])
            out[spec, informed] = [x for v in vs for x in v.unit_labels]
    assert _rates(truth, out["reference:oracle", True]) == (1.0, 1.0, 1.0)
    assert _rates(truth, out["reference:oracle", False]) == (0.0, 1.0, 0.5)
    flagged = out["reference:flag-all", False]
    assert sum(t and f for t, f in zip(truth, flagged)) / sum(flagged) == 1162 / 3496
    assert _rates(truth, out["reference:flag-none", True]) == (0.0, 1.0, 0.5)


def test_oracle_typed_form_with_the_type_list_as_units_and_placebo_world():
    # typed: ``units`` is the list of allowed type ids, not the item's constraints
    item = _frank_like()
    types = ["EntE", "OutE", "CircE", "GramE", "LinkE"]
    req = _request(item, informed=True, form="typed").model_copy(update={"units": types})
    assert _run("reference:oracle", [req])[0].defect_ids == ["EntE", "OutE"]
    # placebo: a world is shown, but not the item's own: the cause-controlled ceiling reports nothing
    placebo = _request(item, informed=True, form="label")
    placebo = placebo.model_copy(update={"evidence": "another item's article", "meta": {**placebo.meta,
                                                                                         "world_shown": False}})
    own = placebo.model_copy(update={"meta": {**placebo.meta, "world_shown": True}})
    assert [v.label for v in _run("reference:oracle", [placebo, own])] == [False, True]
