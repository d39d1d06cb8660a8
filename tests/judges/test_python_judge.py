"""``python:package.module:function`` judges: sync and async callables, every return form, parse
failures counted, the call store keyed by qualified name and version, one-line build errors. (The same
verdicts under the Ray backend, workers rebuilding the judge from its spec string: tests/runtime/test_ray_backend.py,
on that module's Ray instance.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import pyjudge_callables as cb
from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.records import JudgeRequest, verdicts_frame
from judgeaudit.runtime.executor import RetryPolicy, run
from judgeaudit.runtime.store import CallStore

HERE = Path(__file__).parents[1]   # tests/: where pyjudge_callables lives
SRC = Path(__file__).parents[2] / "src"
FAST = RetryPolicy(max_retries=0, base_delay=0.01, max_delay=0.05, timeout=120.0)


@pytest.mark.parametrize("fn", ["grade", "agrade"])
def test_sync_and_async_callables_grade(fn):
    judge = make_judge(f"python:pyjudge_callables:{fn}?version=1")
    verdicts = run(judge, cb.graded_requests(), progress=False, policy=FAST)
    assert [v.score for v in verdicts] == [float(cb.expected_grade(t)) for t in cb.TEXTS]
    assert all(v.parse_ok and v.error is None and v.score_source == "parsed" for v in verdicts)
    assert {v.model for v in verdicts} == {f"pyjudge_callables:{fn}"}
    assert judge.is_async is (fn == "agrade")


def test_pairwise_defects_and_dict_returns():
    pair = [JudgeRequest(request_id="p|AB", form="pairwise", prompt="q", response_a="long answer", response_b="s"),
            JudgeRequest(request_id="p|BA", form="pairwise", prompt="q", response_a="s", response_b="long answer")]
    assert [v.choice for v in run(make_judge("python:pyjudge_callables:grade"), pair, progress=False)] == ["A", "B"]
    reqs = [JudgeRequest(request_id="d0", form="defects", text="it always works"),
            JudgeRequest(request_id="d1", form="defects", text="it works")]
    d0, d1 = run(make_judge("python:pyjudge_callables:find_defects"), reqs, progress=False)
    assert d0.parse_ok and [(d.span, d.reason) for d in d0.defects] == [("always", "overgeneralises")]
    assert d1.parse_ok and d1.defects == []
    (v,) = run(make_judge("python:pyjudge_callables:as_dict"), cb.graded_requests(1), progress=False)
    assert (v.score, v.raw, v.rationale, v.parse_ok) == (2.0, "my reply for r0", "counted the characters", True)


def test_anything_else_is_a_parse_failure_counted_with_its_reason():
    verdicts = run(make_judge("python:pyjudge_callables:bad"), cb.graded_requests(8), progress=False, policy=FAST)
    df = verdicts_frame(verdicts)
    assert len(df) == 8 and df["error"].isna().all()          # every call completed: none dropped
    assert df["parse_ok"].tolist() == [False] * 7 + [True]
    assert df["score"].tolist()[7] == 4.0 and df["score"].iloc[:7].isna().all()
    reasons = [v.meta["parse_error"] for v in verdicts[:7]]
    assert reasons == [
        "a graded request needs a number, got str 'seven'",
        "a graded request needs a number, got NoneType None",
        "a graded request needs a number, got bool True",
        "score 12.0 is outside the 1–9 scale",
        "a graded request needs a number, got str 'x'",
        "a graded request needs a number, got no 'score'",
        "score nan is outside the 1–9 scale",
    ]
    assert verdicts[0].raw == '"seven"'                           # what the callable returned is kept


def test_an_exception_is_a_failed_call_with_its_error():
    (v,) = run(make_judge("python:pyjudge_callables:boom"), cb.graded_requests(1), progress=False, policy=FAST)
    assert not v.parse_ok and v.error == "RuntimeError: cannot judge r0"


def test_call_store_keys_by_qualified_name_and_version(tmp_path):
    reqs = cb.graded_requests(6)
    cb.CALLS.clear()
    with CallStore(tmp_path / "calls.sqlite") as store:
        first = run(make_judge("python:pyjudge_callables:grade?version=1"), reqs, store=store, progress=False)
        assert len(cb.CALLS) == 6
        again = run(make_judge("python:pyjudge_callables:grade?version=1"), reqs, store=store, progress=False)
        assert len(cb.CALLS) == 6                                 # served from the store
        assert [v.score for v in again] == [v.score for v in first]
        bumped = run(make_judge("python:pyjudge_callables:grade?version=2"), reqs, store=store, progress=False)
        assert len(cb.CALLS) == 12                                # another version: called again
        other = run(make_judge("python:pyjudge_callables:agrade?version=1"), reqs, store=store, progress=False)
        assert len(cb.CALLS) == 18                                # another function: called again
    keys = [{v.call_key for v in vs} for vs in (first, bumped, other)]
    assert not (keys[0] & keys[1]) and not (keys[0] & keys[2])
    # without ?version= the version is the hash of the function's source: stable from one build to the next
    a, b = make_judge("python:pyjudge_callables:grade"), make_judge("python:pyjudge_callables:grade")
    assert a.spec.template_version == b.spec.template_version and a.spec.template_version.startswith("src-")
    assert make_judge("python:pyjudge_callables:grade?family=openai").spec.family == "openai"
    assert make_judge("python:pyjudge_callables:grade").spec.family is None


@pytest.mark.parametrize(("spec", "message"), [
    ("python:no_such_module_xyz:f", "cannot import module 'no_such_module_xyz' (ModuleNotFoundError"),
    ("python:pyjudge_callables:missing", "module 'pyjudge_callables' has no attribute 'missing'"),
    ("python:pyjudge_callables:NOT_CALLABLE", "is a int, not a callable"),
    ("python:pyjudge_callables", "a python judge is python:package.module:function"),
    ("python:pyjudge_callables:grade?temperature=0", "unknown option(s) temperature"),
])
def test_build_errors_name_the_spec_before_any_call(spec, message):
    with pytest.raises(InputError) as err:
        make_judge(spec)
    text = str(err.value)
    assert message in text and repr(spec.split("?")[0])[:-1] in text and "\n" not in text


def test_cli_import_error_is_one_line_and_no_call(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text('{"item_id": "a", "text": "t"}\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE)])}
    proc = subprocess.run([sys.executable, "-m", "judgeaudit.cli", "judge", "--judge", "python:pyjudge_callables:nope",
                           "--input", str(items), "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines == ["error: field 'judge': judge spec 'python:pyjudge_callables:nope': module 'pyjudge_callables' "
                     "has no attribute 'nope'"]
    assert not (tmp_path / "out" / "calls.sqlite").exists()


# ------------------------------------------------------------------ numpy scalars, sys.exit


def test_numpy_scalars_are_read_as_the_numbers_they_hold():
    expected = [float(cb.expected_grade(t)) for t in cb.TEXTS]
    for fn in ("np_int", "np_float", "np_dict"):
        verdicts = run(make_judge(f"python:pyjudge_callables:{fn}"), cb.graded_requests(), progress=False, policy=FAST)
        assert [v.score for v in verdicts] == expected, fn
        assert all(v.parse_ok and v.error is None for v in verdicts), [v.meta for v in verdicts]
    pair = [JudgeRequest(request_id="p", form="pairwise", prompt="q", response_a="s", response_b="long answer")]
    assert [v.choice for v in run(make_judge("python:pyjudge_callables:np_int"), pair, progress=False)] == ["B"]


def test_a_numpy_bool_is_a_pass_fail_verdict_and_a_world_label():
    verdicts = run(make_judge("python:pyjudge_callables:np_passes"), cb.graded_requests(), progress=False, policy=FAST)
    assert [v.score for v in verdicts] == [0.0 if "always" in t else 1.0 for t in cb.TEXTS]
    assert all(v.parse_ok for v in verdicts)
    reqs = [JudgeRequest(request_id=f"w{i}", form=form, text=t, evidence="world", meta={"template": "world"})
            for i, (form, t) in enumerate([("label", "it always works"), ("label", "it works"),
                                           ("score", "it always works"), ("score", "it works")])]
    got = run(make_judge("python:pyjudge_callables:np_world"), reqs, progress=False, policy=FAST)
    assert all(v.parse_ok and v.error is None for v in got), [v.meta for v in got]
    assert [v.label for v in got[:2]] == [True, False]
    assert [v.score for v in got[2:]] == [1.0, 5.0]


def test_a_numpy_bool_is_not_a_grade_on_the_1_to_9_scale():
    (v,) = run(make_judge("python:pyjudge_callables:np_passes?scale=1,9"), cb.graded_requests(1), progress=False,
               policy=FAST)
    assert not v.parse_ok and v.meta["parse_error"] == "a graded request needs a number, got bool True"


@pytest.mark.parametrize("fn, code", [("exits", "3"), ("aexits", "'stop'")])
def test_sys_exit_in_a_judge_is_a_failed_call_not_the_end_of_the_run(fn, code):
    verdicts = run(make_judge(f"python:pyjudge_callables:{fn}"), cb.graded_requests(3), progress=False, policy=FAST)
    assert len(verdicts) == 3 and all(not v.parse_ok for v in verdicts)
    assert all(f"raised SystemExit({code})" in v.error and "sys.exit" in v.error for v in verdicts), verdicts[0].error


def test_sys_exit_in_a_judge_is_one_line_at_the_command_line(tmp_path, cli_main):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(f'{{"item_id": "i{i}", "text": "t{i}"}}\n' for i in range(3)))
    r = cli_main("judge", "--judge", "python:pyjudge_callables:exits", "--input", items, "--out", tmp_path / "out",
                 "--retries", "0")
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and "interrupted" not in r.stderr
    last = [ln for ln in r.stderr.splitlines() if ln.strip()][-1]
    assert "produced no usable verdict: 3 of 3 calls failed" in last and "SystemExit(3)" in r.stderr, r.stderr
    rows = (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()
    assert len(rows) == 3 and all("SystemExit(3)" in row for row in rows)
