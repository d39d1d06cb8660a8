"""promptfoo interoperability: ``replay:promptfoo:results.json`` on output files written here in the shape
``promptfoo eval -o results.json`` writes (promptfoo's ``OutputFile``: passing, failing and errored tests, a
named-score assertion, two providers, a repeated test), and the ``get_assert`` Python assertion running a
judgeaudit judge; plus the replay-format registry and the layer rule that ``judges/`` never imports
``interop``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.commands.common import build_judges
from judgeaudit.errors import InputError
from judgeaudit.interop.promptfoo import get_assert
from judgeaudit.judges import make_judge
from judgeaudit.judges.elicit import WORLD_TEMPLATE
from judgeaudit.judges.replay import formats
from judgeaudit.records import JudgeRequest
from judgeaudit.runtime.executor import run

SRC = Path(__file__).resolve().parents[2] / "src" / "judgeaudit"


def result(test_idx: int, *, vars_: dict, passed: bool | None, score: float | None, reason: str = "",
           provider: str = "openai:gpt-4o-mini", prompt_idx: int = 0, error: str | None = None,
           failure: int | None = None, components: list | None = None, named: dict | None = None,
           description: str | None = None, output: str = "an answer") -> dict:
    """One ``EvaluateResult`` as promptfoo writes it in ``results.results``."""
    grading = None if passed is None else {
        "pass": passed, "score": score, "reason": reason, "namedScores": named or {},
        "tokensUsed": {"total": 0, "prompt": 0, "completion": 0},
        "componentResults": components or [{"pass": passed, "score": score, "reason": reason,
                                            "assertion": {"type": "llm-rubric", "value": "is correct"}}]}
    return {
        "id": f"res-{test_idx}-{prompt_idx}-{provider}", "promptIdx": prompt_idx, "testIdx": test_idx,
        "testCase": {"vars": vars_, "assert": [{"type": "llm-rubric", "value": "is correct"}],
                     **({"description": description} if description else {})},
        "promptId": "p0", "provider": {"id": provider, "label": ""},
        "prompt": {"raw": "Answer: {{question}}", "label": "Answer: {{question}}"},
        "vars": vars_, "response": None if error else {"output": output, "tokenUsage": {}},
        "error": error, "failureReason": failure if failure is not None else (0 if passed else 1),
        "success": bool(passed), "score": score if score is not None else 0, "latencyMs": 12,
        "gradingResult": grading, "namedScores": named or {}, "cost": 0.0001, "metadata": {},
    }


def output_file(path: Path, results: list[dict]) -> Path:
    doc = {"evalId": "eval-abc-2026-12-01T00:00:00", "results": {
        "version": 3, "timestamp": "2026-12-01T00:00:00.000Z", "results": results, "prompts": [],
        "stats": {"successes": sum(r["success"] for r in results),
                  "failures": sum(not r["success"] for r in results), "errors": 0, "tokenUsage": {}}},
        "config": {"description": "fixture"}, "shareableUrl": None,
        "metadata": {"promptfooVersion": "0.120.0", "nodeVersion": "v22", "platform": "linux", "arch": "x64",
                     "exportedAt": "2026-12-01T00:00:00.000Z"}}
    path.write_text(json.dumps(doc, indent=2))
    return path


@pytest.fixture
def basic(tmp_path) -> Path:
    named = [{"pass": True, "score": 1.0, "reason": "contains Paris",
              "assertion": {"type": "contains", "value": "Paris", "metric": "accuracy"}},
             {"pass": False, "score": 0.5, "reason": "tone is curt",
              "assertion": {"type": "llm-rubric", "value": "polite", "metric": "tone"}}]
    return output_file(tmp_path / "results.json", [
        result(0, vars_={"id": "q1", "question": "capital of France?"}, passed=True, score=1.0, reason="correct"),
        result(1, vars_={"id": "q2", "question": "2+2?"}, passed=False, score=0.0, reason="says 5",
               output="5"),
        result(2, vars_={"id": "q3", "question": "boom"}, passed=None, score=None, error="API error: 500",
               failure=2),
        result(3, vars_={"question": "no id var"}, passed=True, score=0.75, reason="partly",
               description="the fourth test", named={"accuracy": 1.0, "tone": 0.5}, components=named),
        result(4, vars_={"question": "nothing at all"}, passed=True, score=0.25, reason="weak"),
    ])


def graded(rid: str, epoch: int = 0) -> JudgeRequest:
    return JudgeRequest(request_id=rid, form="graded", text="x", epoch=epoch)


def label(rid: str) -> JudgeRequest:
    return JudgeRequest(request_id=rid, form="label", text="x", evidence="e", meta={"template": WORLD_TEMPLATE})


def test_each_test_is_one_verdict_with_its_grade_reason_and_id(basic):
    j = make_judge(f"replay:promptfoo:{basic}")
    v = {x.request_id: x for x in run(j, [graded(i) for i in ("q1", "q2", "q3", "the fourth test", "test-4")],
                                      progress=False)}
    assert (v["q1"].score, v["q1"].rationale, v["q1"].raw, v["q1"].error) == (9.0, "correct", "an answer", None)
    assert (v["q2"].score, v["q2"].rationale, v["q2"].raw) == (1.0, "says 5", "5")      # 1 + 8·0
    assert v["q3"].error == "promptfoo error: API error: 500" and not v["q3"].parse_ok
    assert v["the fourth test"].score == 7.0                                         # 1 + 8·0.75, by description
    assert v["test-4"].score == 3.0                                                  # no id, no description
    assert all(x.score_source == "replay" for k, x in v.items() if k != "q3")
    assert j.id == f"replay:promptfoo:{basic}"


def test_pass_is_the_label_of_a_world_label_request(basic):
    j = make_judge(f"replay:promptfoo:{basic}")
    v = {x.request_id: x for x in run(j, [label("q1"), label("q2")], progress=False)}
    assert (v["q1"].label, v["q2"].label) == (True, False)


def test_a_named_score_is_read_with_its_component_pass_and_reason(basic):
    j = make_judge(f"replay:promptfoo:{basic}?metric=tone")
    v, = run(j, [graded("the fourth test")], progress=False)
    assert (v.score, v.rationale) == (5.0, "tone is curt")                           # 1 + 8·0.5
    lab, = run(j, [label("the fourth test")], progress=False)
    assert lab.label is False
    other, = run(j, [graded("q1")], progress=False)                                   # q1 has no 'tone' score
    assert other.error == "no named score 'tone' in this result"


def test_an_id_var_of_another_name(tmp_path):
    path = output_file(tmp_path / "r.json", [result(0, vars_={"case": "c-7"}, passed=True, score=1.0)])
    v, = run(make_judge(f"replay:promptfoo:{path}?id=case"), [graded("c-7")], progress=False)
    assert v.score == 9.0


def test_two_providers_are_two_judges_and_a_repeat_is_an_epoch(tmp_path):
    path = output_file(tmp_path / "r.json", [
        result(0, vars_={"id": "a"}, passed=True, score=1.0, provider="openai:gpt-4o"),
        result(0, vars_={"id": "a"}, passed=False, score=0.0, provider="anthropic:claude"),
        result(0, vars_={"id": "a"}, passed=False, score=0.5, provider="openai:gpt-4o"),   # --repeat 2
    ])
    judges = build_judges([f"replay:promptfoo:{path}"])
    assert len(judges) == 2
    by = {j.id.rsplit("judge=", 1)[1]: j for j in judges}
    assert set(by) == {"openai%3Agpt-4o", "anthropic%3Aclaude"}
    first, second = run(by["openai%3Agpt-4o"], [graded("a"), graded("a", epoch=1)], progress=False)
    assert (first.score, second.score) == (9.0, 5.0)
    with pytest.raises(InputError) as e:
        make_judge(f"replay:promptfoo:{path}")
    assert e.value.field == "judge"
    one = make_judge(f"replay:promptfoo:{path}?judge=anthropic:claude")
    assert run(one, [graded("a")], progress=False)[0].score == 1.0


def test_promptfoo_judges_in_python(basic):
    from judgeaudit.interop.promptfoo import promptfoo_judges

    judge, = promptfoo_judges(str(basic))                                           # one provider × prompt
    assert judge.id == f"replay:promptfoo:{basic}"
    v = {x.request_id: x for x in run(judge, [graded("q1"), graded("q2"), graded("q3")], progress=False)}
    assert (v["q1"].score, v["q1"].rationale, v["q2"].score) == (9.0, "correct", 1.0)
    assert v["q3"].error == "promptfoo error: API error: 500"


def test_a_score_on_another_range_needs_scale(tmp_path):
    path = output_file(tmp_path / "r.json", [result(0, vars_={"id": "a"}, passed=True, score=8.0)])
    with pytest.raises(InputError) as e:
        make_judge(f"replay:promptfoo:{path}")
    assert (e.value.line, e.value.field) == (1, "gradingResult.score")
    v, = run(make_judge(f"replay:promptfoo:{path}?scale=0,10"), [graded("a")], progress=False)
    assert v.score == pytest.approx(1 + 8 * 0.8)


@pytest.mark.parametrize("doc,line,field", [
    ({"evalId": "x", "results": {"version": 3}}, None, "results.results"),
    ({"evalId": "x", "results": {"version": 3, "results": [{"testIdx": 0, "vars": {"id": "a"},
                                                             "gradingResult": {"pass": "yes", "score": 1}}]}},
     1, "gradingResult.pass"),
    ({"evalId": "x", "results": {"version": 3, "results": [
        {"testIdx": 0, "vars": {"id": "a"}, "gradingResult": {"pass": True, "score": 1}},
        {"testIdx": 1, "vars": {"id": "b"}, "gradingResult": {"pass": True, "score": "high"}}]}},
     2, "gradingResult.score"),
])
def test_a_malformed_file_is_one_error_naming_the_result_and_field(tmp_path, doc, line, field):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError) as e:
        make_judge(f"replay:promptfoo:{path}")
    assert (e.value.path, e.value.line, e.value.field) == (str(path), line, field)


def test_the_cli_reads_a_promptfoo_file(tmp_path, basic):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"item_id": i, "text": "x"}) + "\n" for i in ("q1", "q2", "q3")))
    r = CliRunner().invoke(app, ["judge", "--judge", f"replay:promptfoo:{basic}", "--input", str(items),
                                 "--out", str(tmp_path / "o"), "--allow-failures"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in (tmp_path / "o" / "verdicts.jsonl").read_text().splitlines()]
    assert [(x["request_id"], x["score"], x["error"]) for x in rows] == [
        ("q1", 9.0, None), ("q2", 1.0, None), ("q3", None, "promptfoo error: API error: 500")]


# ------------------------------------------------------------------------------------------ the assertion


def test_get_assert_runs_a_judgeaudit_judge_and_returns_a_grading_result():
    ctx = {"prompt": "Write about cats", "vars": {"id": "t1"}, "test": {"vars": {"id": "t1"}},
           "config": {"judge": "reference:length", "threshold": 5}}
    long, short = "c" * 400, "c" * 40     # reference:length grades 1 + 8·min(1, chars/400): 9.0 and 1.8
    got = get_assert(long, ctx)
    assert got["pass"] is True and got["score"] == pytest.approx(1.0)
    assert got["reason"].startswith("judgeaudit reference:length: grade 9 on 1–9")
    got = get_assert(short, ctx)
    assert got["pass"] is False and got["score"] == pytest.approx((1.8 - 1) / 8)
    assert set(got) == {"pass", "score", "reason", "metadata"}   # promptfoo's GradingResult keys
    assert got["metadata"]["judgeaudit"]["grade"] == pytest.approx(1.8)


def test_get_assert_round_trips_through_replay(tmp_path):
    """The score the assertion returns reads back through replay:promptfoo as the judge's grade."""
    ctx = {"vars": {"id": "t1"}, "test": {}, "config": {"judge": "reference:length"}}
    got = get_assert("c" * 200, ctx)                                    # grade 5.0
    path = output_file(tmp_path / "r.json", [result(0, vars_={"id": "t1"}, passed=got["pass"], score=got["score"],
                                                    reason=got["reason"])])
    v, = run(make_judge(f"replay:promptfoo:{path}"), [graded("t1")], progress=False)
    assert v.score == pytest.approx(5.0) and v.rationale == got["reason"]


def test_get_assert_stores_calls_when_given_a_store(tmp_path):
    ctx = {"vars": {"id": "t1"}, "test": {}, "config": {"judge": "reference:length", "store": str(tmp_path / "c.sqlite")}}
    get_assert("c" * 200, ctx)
    assert (tmp_path / "c.sqlite").exists()


def test_get_assert_needs_a_judge():
    with pytest.raises(InputError) as e:
        get_assert("x", {"vars": {}, "config": {}})
    assert e.value.field == "config.judge"


# ------------------------------------------------------------------------------ the registry and the layers


def test_replay_formats_are_registered_by_interop():
    assert {"inspect", "promptfoo"} <= set(formats())



def test_get_assert_with_an_api_judge_on_the_local_server(fake_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda prompt: "Score: 7")
    ctx = {"prompt": "Summarise", "vars": {"id": "t9", "context": "the source"}, "test": {},
           "config": {"judge": "api:openai/fake-model", "api_base": srv.base_url, "evidence_var": "context",
                      "threshold": 6}}
    got = get_assert("a summary", ctx)
    assert got["pass"] is True and got["score"] == pytest.approx((7 - 1) / 8)
    sent = srv.requests[0]["messages"][0]["content"]
    assert "a summary" in sent and "the source" in sent           # the output graded against the evidence var


def test_a_file_that_is_not_utf8_is_one_line_naming_its_line(tmp_path, cli_main):
    path = tmp_path / "r.json"
    path.write_bytes(b'{"evalId": "x",\n "results": {"version": 3, "results": [{"vars": {"id": "caf\xe9"}}]}}\n')
    items = tmp_path / "items.jsonl"
    items.write_text('{"item_id": "a", "text": "x"}\n')
    r = cli_main("judge", "--judge", f"replay:promptfoo:{path}", "--input", items, "--out", tmp_path / "o")
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}:2: not UTF-8 text (byte 0xe9"), r.stderr
    assert not (tmp_path / "o").exists()
