"""A ``python:`` judge declares its scale (``?scale=1,10[&higher=better|worse]`` on the spec, or a ``judge_scale``
attribute on the callable): its grades are validated against that scale (a grade off it is a counted parse
failure), the scale enters the call key, and the validity analysis reads the judge's frontier on it."""

from __future__ import annotations

import json

import pytest

from judgeaudit.commands.validity import run_validity
from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest
from judgeaudit.runtime.executor import run


def _rated(*ratings) -> list[JudgeRequest]:
    return [JudgeRequest(request_id=f"r{i}", text="t", meta={"rating": r}) for i, r in enumerate(ratings)]


def test_grades_are_validated_against_the_declared_scale():
    reqs = _rated(10, 1, 11, 0)
    declared = run(make_judge("python:pyjudge_callables:rate10?scale=1,10"), reqs, progress=False)
    assert [(v.parse_ok, v.score) for v in declared] == [(True, 10.0), (True, 1.0), (False, None), (False, None)]
    assert declared[2].meta["parse_error"] == "score 11.0 is outside the declared 1-10 scale"
    on_9 = run(make_judge("python:pyjudge_callables:rate10"), reqs, progress=False)
    assert [v.parse_ok for v in on_9] == [False, True, False, False]
    assert on_9[0].meta["parse_error"] == "score 10.0 is outside the 1–9 scale"


def test_the_scale_from_the_spec_or_the_callable_enters_the_call_key():
    by_spec = make_judge("python:pyjudge_callables:rate10?scale=1,10&version=1")
    assert by_spec.scale.label() == "1-10" and by_spec.scale.higher == "better"
    plain = make_judge("python:pyjudge_callables:rate10?version=1")
    assert plain.scale is None
    (r,) = _rated(7)
    assert by_spec.key(r) != plain.key(r)
    worse = make_judge("python:pyjudge_callables:rate10?scale=1,10&higher=worse&version=1")
    assert worse.scale.higher == "worse" and worse.key(r) != by_spec.key(r)
    attr = make_judge("python:pyjudge_callables:rate10_declared")
    assert attr.scale.label() == "1-10"
    assert make_judge("python:pyjudge_callables:rate10_declared?scale=1,5").scale.label() == "1-5"   # the spec wins
    pf = make_judge("python:pyjudge_callables:passes")
    verdicts = run(pf, [JudgeRequest(request_id="a", text="it works"),
                        JudgeRequest(request_id="b", text="it always works")], progress=False)
    assert pf.scale.pass_fail and [(v.parse_ok, v.score) for v in verdicts] == [(True, 1.0), (True, 0.0)]


@pytest.mark.parametrize(("spec", "message"), [
    ("python:pyjudge_callables:rate10?scale=1,x", "scale=: scale must be LO,HI"),
    ("python:pyjudge_callables:rate10?scale=1,10&higher=up", "higher must be better or worse"),
    ("python:pyjudge_callables:rate10?higher=better", "give scale=LO,HI too"),
    ("python:pyjudge_callables:badly_declared", "the callable's judge_scale: a judge's scale runs between whole"),
])
def test_a_bad_scale_is_one_line_naming_the_spec(spec, message):
    with pytest.raises(InputError, match=message) as e:
        make_judge(spec)
    assert spec in str(e.value) and "\n" not in str(e.value)


def test_validity_reads_a_1_to_10_python_judge_on_its_scale(small_probes, tmp_path):
    spec = "python:pyjudge_callables:rate10?scale=1,10"
    run_validity(str(small_probes), [spec], out=tmp_path / "v", n_boot=50, n_regrade=0)
    j = json.loads((tmp_path / "v" / "result.json").read_text())["judges"][spec]
    assert j["scale"]["label"] == "1-10" and j["scale"]["reflected"]
    assert (j["S"], j["R_plus"], j["wrong_way_rate"], j["tau"], j["parse_failures"]) == (1.0, 1.0, 0.0, 9.0, 0)
