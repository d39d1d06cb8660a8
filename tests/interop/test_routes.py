"""A judge is the same judge on every route: provider batch files (Anthropic's top-level ``system``), the
exported promptfoo config and Inspect task (roles kept, the template's parser and scale), replay files read
with the template's parser, unknown replay options refused, rich markup escaped in ``templates``; the round
trip through every export format for validity, CAP and world."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from testkit import small_probes
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge
from judgeaudit.judges.templates import get_template
from judgeaudit.records import JudgeRequest
from judgeaudit.runtime.executor import run

GRADED = JudgeRequest(request_id="g1", form="graded", text="The sky is green.", evidence="The sky is blue.",
                      criterion="Is the claim supported?", prompt="What colour is the sky?")


# ------------------------------------------------------------------------------ 11. Anthropic batches


def test_anthropic_batch_sends_the_system_prompt_as_the_top_level_system_field(tmp_path):
    from judgeaudit.interop.batch import write_batch

    judge = make_judge("api:anthropic/claude-3-5-haiku-20241022?template=mt-bench-single")
    files = write_batch(judge, [GRADED], tmp_path / "s.sqlite", provider="anthropic", out=tmp_path / "b.json")
    (path, n), = files
    params = json.loads(path.read_text())["requests"][0]["params"]
    system, user = get_template("mt-bench-single").render_parts(GRADED)
    # the Messages API: system is a top-level parameter; messages hold only user/assistant turns
    assert params["system"] == system == "You are a helpful assistant."
    assert params["messages"] == [{"role": "user", "content": user}]
    assert params["max_tokens"] > 0


def test_openai_batch_keeps_the_system_message_in_messages(tmp_path):
    from judgeaudit.interop.batch import write_batch

    judge = make_judge("api:openai/gpt-4o-mini-2024-07-18?template=mt-bench-single")
    (path, _), = write_batch(judge, [GRADED], tmp_path / "s.sqlite", provider="openai", out=tmp_path / "b.jsonl")
    line = json.loads(path.read_text().splitlines()[0])
    assert line["method"] == "POST" and line["url"] == "/v1/chat/completions"
    assert [m["role"] for m in line["body"]["messages"]] == ["system", "user"]


# ------------------------------------------------------------------------------ 12. small


@pytest.mark.parametrize("cmd", [["templates", "list"], ["templates", "show", "mt-bench-single"]])
def test_templates_print_rating_brackets_as_written(cmd):
    res = CliRunner().invoke(app, cmd)
    assert res.exit_code == 0, res.output
    assert "[[rating]]" in res.output


def test_the_exported_promptfoo_config_leaves_the_provider_to_the_user(tmp_path):
    import yaml

    out = tmp_path / "export"
    res = CliRunner().invoke(app, ["requests", "export", "--analysis", "validity", "--regrade", "0", "--out",
                                   str(out)])
    assert res.exit_code == 0, res.output
    text = (out / "promptfooconfig.yaml").read_text()
    assert "providers" not in yaml.safe_load(text) and "gpt-4o-mini" not in text
    assert "# providers:" in text   # a comment says where the user's provider goes


# ------------------------------------------------------------------------------ 3. replay with a template


def _answers(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_replay_reads_raw_replies_with_the_template_parser(tmp_path):
    path = _answers(tmp_path, [{"request_id": "g1", "raw": "Feedback: close to the rubric. [RESULT] 4"},
                               {"request_id": "g2", "raw": "Feedback: fine.\n[RESULT] 2"}])
    reqs = [GRADED, GRADED.model_copy(update={"request_id": "g2"})]
    judge = make_judge(f"replay:{path}?scale=1,5&template=prometheus-absolute")
    got = run(judge, reqs, progress=False)
    assert [(v.score, v.parse_ok) for v in got] == [(4.0, True), (2.0, True)]
    assert judge.scale.higher == "better" and (judge.scale.min, judge.scale.max) == (1, 5)
    # the template's scale is the judge's when the spec gives none
    judge = make_judge(f"replay:{path}?template=prometheus-absolute")
    assert [v.score for v in run(judge, reqs, progress=False)] == [4.0, 2.0]
    assert (judge.scale.min, judge.scale.max, judge.scale.higher) == (1, 5, "better")
    # the command line's expansion and its --template
    from judgeaudit.commands.common import build_judges

    j, = build_judges([f"replay:{path}?template=prometheus-absolute"])
    assert [v.score for v in run(j, reqs, progress=False)] == [4.0, 2.0]
    j, = build_judges([f"replay:{path}"], template="prometheus-absolute")
    assert [v.score for v in run(j, reqs, progress=False)] == [4.0, 2.0]


def test_replay_refuses_a_scale_other_than_the_template_s(tmp_path):
    path = _answers(tmp_path, [{"request_id": "g1", "raw": "[RESULT] 4"}])
    with pytest.raises(InputError) as e:
        make_judge(f"replay:{path}?scale=1,10&template=prometheus-absolute")
    assert e.value.field == "scale" and "1-5" in str(e.value)


@pytest.mark.parametrize("spec", ["replay:{p}?tempalte=x", "replay:{p}?foo=1&score=score"])
def test_an_option_a_replay_spec_does_not_know_is_an_error(tmp_path, spec):
    path = _answers(tmp_path, [{"request_id": "g1", "score": 3}])
    for build in (lambda s: make_judge(s), lambda s: __import__("judgeaudit.commands.common", fromlist=["x"])
                  .build_judges([s])):
        with pytest.raises(InputError) as e:
            build(spec.format(p=path))
        assert "unknown option" in str(e.value) and "template" in str(e.value) and "scale" in str(e.value)


# ------------------------------------------------------------------------------ 1, 2, 4. the round trip


PASS_FAIL = """name: claim-check
version: "1"
form: graded
scale: pass_fail
parser: pass/fail
system: You check one claim against its evidence.
user: |-
  Evidence: {{ evidence }}
  Claim: {{ text }}
  Answer PASS if the evidence licenses the claim, else FAIL.
"""


def _template(kind: str, tmp_path: Path) -> str:
    if kind == "pass_fail":
        path = tmp_path / "claim-check.yaml"
        path.write_text(PASS_FAIL)
        return str(path)
    return kind


def scripted_reply(messages: list[dict]) -> str:
    """A scripted judge: its verdict is a function of the user message, given only when the template's system
    prompt came as a system message (a judge that hears its instructions as one user turn answers otherwise)."""
    import hashlib

    roles = [m["role"] for m in messages]
    user = messages[-1]["content"]
    h = int(hashlib.sha256(user.encode()).hexdigest(), 16)
    heard = roles == ["system", "user"]
    if "Rating: [[5]]" in user:            # mt-bench-single, 1-10
        return f"An explanation.\n\nRating: [[{1 + h % 10 if heard else 1}]]"
    if "[RESULT]" in user:                 # prometheus-absolute, 1-5, a regex parser
        return f"Feedback: against the rubric. [RESULT] {1 + h % 5 if heard else 1}"
    if "Answer PASS" in user:              # pass/fail
        return "PASS" if heard and h % 3 else "FAIL"
    if "[The Start of Assistant A's Answer]" in user:   # mt-bench-pair
        return f"A comparison.\n\n[[{'AB'[h % 2] if heard else 'C'}]]"
    if "# Output (a):" in user:            # llmbar-vanilla, a regex parser
        return f"Output ({'ab'[h % 2] if heard else 'a'})"
    raise AssertionError(f"no scripted reply for {user[:80]!r}")


def _inspect_eval(task_file: Path, log_dir: Path, monkeypatch, seen: list, reply=None):
    import importlib.util

    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    spec = importlib.util.spec_from_file_location(f"exported_task_{log_dir.name}", task_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    answer = reply or scripted_reply

    def respond(messages, tools, tool_choice, config):
        msgs = [{"role": m.role, "content": m.text} for m in messages]
        seen.append([m["role"] for m in msgs])
        out = ModelOutput.from_content(model="mockllm", content=answer(msgs))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    for name, value in {"INSPECT_LOG_DIR": log_dir, "INSPECT_DISPLAY": "none", "XDG_DATA_HOME": log_dir / "data",
                        "XDG_CACHE_HOME": log_dir / "cache"}.items():
        monkeypatch.setenv(name, str(value))
    (log,) = inspect_eval(module.judgeaudit_requests(), model=get_model("mockllm/model", custom_outputs=respond),
                          log_dir=str(log_dir), display="none", max_connections=4)
    assert log.status == "success"
    return log


def _promptfoo_results(out: Path, path: Path, reply=None) -> Path:
    """What ``promptfoo eval -c promptfooconfig.yaml -o results.json`` writes for the exported tests: each
    test's prompt (promptfoo's chat format: the JSON list of messages) sent, the reply kept as the output."""
    import yaml

    config = yaml.safe_load((out / "promptfooconfig.yaml").read_text())
    tests = yaml.load((out / "promptfoo_tests.yaml").read_text(), Loader=yaml.CSafeLoader)
    (prompt,) = config["prompts"]
    results = []
    for idx, t in enumerate(tests):
        rendered = prompt
        for k, v in t["vars"].items():      # promptfoo's nunjucks substitution of {{var}}
            rendered = rendered.replace("{{%s}}" % k, str(v)).replace("{{ %s }}" % k, str(v))
        try:
            messages = json.loads(rendered)
            assert isinstance(messages, list) and all({"role", "content"} <= set(m) for m in messages)
        except (ValueError, AssertionError):
            messages = [{"role": "user", "content": rendered}]   # a plain prompt is one user message
        results.append({"id": f"r{idx}", "promptIdx": 0, "testIdx": idx, "promptId": "p0",
                        "testCase": {"vars": t["vars"], "description": t["description"]}, "vars": t["vars"],
                        "provider": {"id": "openai:judge", "label": ""}, "prompt": {"raw": rendered, "label": prompt},
                        "response": {"output": (reply or scripted_reply)(messages)}, "error": None, "failureReason": 0,
                        "success": True, "score": 1, "latencyMs": 1, "gradingResult": None, "namedScores": {}})
    path.write_text(json.dumps({"evalId": "e", "results": {"version": 3, "results": results, "prompts": [],
                                                           "stats": {}}, "config": config}))
    return path




def _strip(d: dict | list, spec: str) -> str:
    """A judge's result block as text with its spec named JUDGE, without the identity the run recorded (a
    replay records the route it was read through; the numbers are what must not change)."""
    if isinstance(d, dict):
        d = {k: v for k, v in d.items() if k != "identity"}
    return json.dumps(d, sort_keys=True, default=str).replace(spec, "JUDGE")


_VALIDITY_DIRECT: dict = {}


def _validity_direct(kind: str, root: Path):
    """The direct validity run of the scripted judge for the template ``kind`` (its requests heard with their
    roles) and the template's exported requests, made once per template and shared by the routes."""
    from fakeserver import FakeServer
    from judgeaudit.commands.validity import run_validity
    from judgeaudit.interop.export import request_of

    if kind not in _VALIDITY_DIRECT:
        template = _template(kind, root)
        probes = small_probes(root)
        srv = FakeServer().start()
        try:
            srv._reply_text = lambda body, prompt: scripted_reply(body["messages"])   # the judge hears the roles
            spec = f"api:openai/judge-model?template={template}"
            direct = run_validity(str(probes), [spec], api_base=srv.base_url, out=root / "direct", n_boot=200,
                                  n_regrade=0)
            assert all([m["role"] for m in b["messages"]] == ["system", "user"] for b in srv.requests)
        finally:
            srv.stop()
        out = root / "export"
        res = CliRunner().invoke(app, ["requests", "export", "--analysis", "validity", "--probes", str(probes),
                                       "--regrade", "0", "--template", template, "--out", str(out)])
        assert res.exit_code == 0, res.output
        rows = [json.loads(x) for x in (out / "requests.jsonl").read_text().splitlines()]
        t = get_template(template)
        assert all(r["messages"] == t.messages(request_of(r)) for r in rows)
        assert all(r["template"]["name"] == t.name and r["template"]["scale"] == t.scale.to_dict() for r in rows)
        _VALIDITY_DIRECT[kind] = (template, probes, spec, direct, out, rows, t)
    return _VALIDITY_DIRECT[kind]


@pytest.mark.parametrize("route", ["jsonl", "inspect", "promptfoo"])
@pytest.mark.parametrize("kind", ["mt-bench-single", "prometheus-absolute", "pass_fail"])
def test_validity_round_trip_through_every_export_format(tmp_path_factory, tmp_path, monkeypatch, kind, route):
    """The validity profile of an exported-then-replayed judge equals the direct run's, for a template with a
    system prompt on a 1–10 higher-is-better scale, one with a regex parser (1–5) and a pass/fail one."""
    from judgeaudit.commands.validity import run_validity

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    template, probes, spec, direct, out, rows, t = _validity_direct(kind, tmp_path_factory.mktemp(f"validity-{kind}"))
    replay = _answered(route, out, rows, template, tmp_path, monkeypatch, t)
    back = run_validity(str(probes), [replay], out=tmp_path / "back", n_boot=200, n_regrade=0)
    a = direct.result.to_dict()["judges"][spec]
    b = back.result.to_dict()["judges"][replay]
    assert a["usable_points"] > 0
    assert _strip(a, spec) == _strip(b, replay)
    assert len(back.verdicts) == len(direct.verdicts) and back.verdicts["parse_ok"].all()


def _answered(route: str, out: Path, rows: list[dict], template: str, tmp_path: Path, monkeypatch, t) -> str:
    """The exported requests answered by the scripted judge through ``route``; the replay spec of the answers."""
    if route == "jsonl":
        answers = tmp_path / "answers.jsonl"
        answers.write_text("".join(json.dumps({"request_id": r["request_id"], "epoch": r["epoch"],
                                               "raw": scripted_reply(r["messages"])}) + "\n" for r in rows))
        replay = f"replay:{answers}?template={template}"
    elif route == "inspect":
        pytest.importorskip("inspect_ai")
        seen: list = []
        log = _inspect_eval(out / "inspect_task.py", tmp_path / "logs", monkeypatch, seen)
        assert seen and all(s == ["system", "user"] for s in seen)        # the roles reached the model
        sample = log.samples[0]
        meta = next(iter(sample.scores.values())).metadata["judgeaudit"]
        assert meta["scale"] == (t.scale.to_dict() if t.scale else None) and meta["template"]["name"] == t.name
        replay = f"replay:inspect:{log.location}"
    else:
        results = _promptfoo_results(out, tmp_path / "results.json")
        replay = f"replay:promptfoo:{results}?template={template}"
    return replay


_CAP_DIRECT: dict = {}


def _cap_direct(template: str, root: Path):
    """The direct CAP run of the scripted pairwise judge for ``template`` and the template's exported requests,
    made once per template and shared by the routes."""
    import judgeaudit
    from fakeserver import FakeServer
    from judgeaudit.commands.cap import run_cap

    if template not in _CAP_DIRECT:
        cap_set = f"llmbar:{Path(judgeaudit.__file__).parent / 'data' / 'llmbar'}"
        srv = FakeServer().start()
        try:
            srv._reply_text = lambda body, prompt: scripted_reply(body["messages"])
            spec = f"api:openai/judge-model?template={template}"
            direct = run_cap([cap_set], judge_specs=[spec], api_base=srv.base_url, n_boot=100, seed=0,
                             out=root / "direct")
        finally:
            srv.stop()
        out = root / "export"
        res = CliRunner().invoke(app, ["requests", "export", "--analysis", "cap", "--set", cap_set, "--template",
                                       template, "--out", str(out)])
        assert res.exit_code == 0, res.output
        rows = [json.loads(x) for x in (out / "requests.jsonl").read_text().splitlines()]
        assert all([m["role"] for m in r["messages"]] == ["system", "user"] for r in rows)
        _CAP_DIRECT[template] = (cap_set, spec, direct, out, rows)
    return _CAP_DIRECT[template]


@pytest.mark.parametrize("route", ["jsonl", "inspect", "promptfoo"])
@pytest.mark.parametrize("template", ["mt-bench-pair", "llmbar-vanilla"])
def test_cap_round_trip_through_every_export_format(tmp_path_factory, tmp_path, monkeypatch, template, route):
    """The CAP profile of an exported-then-replayed pairwise judge equals the direct run's, for a template with a
    system prompt and a bracket verdict and one with a regex parser."""
    from judgeaudit.commands.cap import run_cap

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    cap_set, spec, direct, out, rows = _cap_direct(template, tmp_path_factory.mktemp(f"cap-{template}"))
    replay = _answered(route, out, rows, template, tmp_path, monkeypatch, get_template(template))
    back = run_cap([cap_set], judge_specs=[replay], n_boot=100, seed=0, out=tmp_path / "back")
    a = direct.to_dict()["sets"]["llmbar"]["judges"][spec]
    b = back.to_dict()["sets"]["llmbar"]["judges"][replay]
    assert a["conditions"]["C7"]["n"] > 0
    assert _strip(a, spec) == _strip(b, replay)


def scripted_world_reply(messages: list[dict]) -> str:
    """A scripted world judge: it flags the output when a number or capitalised name in it is absent from the
    source material or reference shown; shown neither, it flags by a hash of the output (a blind guess). Only
    the request's own blocks decide it, so every route that delivers the same messages gets the same reply; a
    house system prompt heard as part of the user turn makes it answer "not defective" to everything."""
    import hashlib
    import re

    user = messages[-1]["content"]
    assert messages[-1]["role"] == "user"
    if "HOUSE CHECKER" in user:
        return json.dumps({"defective": False})
    blocks = dict(re.findall(r"(?ms)^(Source material|Reference|Output):\n(.*?)(?=\n\n[A-Z][^\n]*:\n|\n\nAnswer with|\Z)",
                             user))
    output = blocks["Output"]
    shown = " ".join(v for k, v in blocks.items() if k != "Output")
    tokens = re.findall(r"\b(?:\d+|[A-Z][a-z]+)\b", output)
    if shown:
        flagged = any(t not in shown for t in tokens if t not in {"It", "The", "In", "Its"})
    else:
        flagged = int(hashlib.sha256(output.encode()).hexdigest(), 16) % 3 == 0
    if "{\"score\": N}" in user:
        return json.dumps({"score": 1 if flagged else 5})
    return json.dumps({"defective": flagged})


WORLD_ARMS = ["blind", "informed", "placebo", "reference-only"]
HOUSE_WORLD = """name: house-world-judge
version: "1"
family: world
form: label
source: an in-house prompt
system: HOUSE CHECKER. You check answers against the source.
user: |-
  {{ world if world is defined else "No source is shown." }}

  {{ output }}

  {{ answer }}
"""
_WORLD_DIRECT: dict = {}


def _world_direct(kind: str, root: Path):
    """The direct world run of the scripted judge for ``kind`` (``label``/``score``: the built-in prompts of that
    form; ``house``: a world-family template with a system prompt), made once per kind and shared by the routes."""
    import judgeaudit
    from fakeserver import FakeServer
    from judgeaudit.commands.world import run_world_cmd

    if kind not in _WORLD_DIRECT:
        world_set = f"halueval:{Path(judgeaudit.__file__).parent / 'data' / 'halueval'}?part=qa&max_rows=8"
        template = None
        if kind == "house":
            template = root / "house-world.yaml"
            template.write_text(HOUSE_WORLD)
            template = str(template)
        form = "score" if kind == "score" else "label"
        srv = FakeServer().start()
        try:
            srv._reply_text = lambda body, prompt: scripted_world_reply(body["messages"])
            direct = run_world_cmd(world_set, ["api:openai/judge-model"], WORLD_ARMS, out=root / "direct", votes=2,
                                   form=form, api_base=srv.base_url, n_boot=100, permutations=99, progress=False,
                                   template=template)
            sent = sorted(json.dumps(b["messages"], sort_keys=True) for b in srv.requests)
        finally:
            srv.stop()
        _WORLD_DIRECT[kind] = (world_set, form, template, direct, sent)
    return _WORLD_DIRECT[kind]


@pytest.mark.parametrize("route", ["jsonl", "inspect", "promptfoo"])
@pytest.mark.parametrize("kind", ["label", "score", "house"])
def test_world_round_trip_through_every_export_format(tmp_path_factory, tmp_path, monkeypatch, kind, route):
    """The world analysis of an exported-then-replayed judge equals the direct run's (arm rates, paired gains,
    every number of the judge's result) on the blind, informed, placebo and reference arms, two votes each, for
    the built-in label and score prompts and a world-family template with a system prompt."""
    from judgeaudit.commands.world import run_world_cmd

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    world_set, form, template, direct, sent = _world_direct(kind, tmp_path_factory.mktemp(f"world-{kind}"))
    (direct_id,) = direct.result["provenance"]["judges"]
    out = tmp_path / "export"
    args = ["requests", "export", "--analysis", "world", "--set", world_set, "--form", form, "--votes", "2",
            *(x for a in WORLD_ARMS for x in ("--arm", a)), *(["--template", template] if template else [])]
    res = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in (out / "requests.jsonl").read_text().splitlines()]
    assert {r["meta"]["arm"] for r in rows} == set(WORLD_ARMS) and {r["epoch"] for r in rows} == {0, 1}
    # the distinct messages the direct run sent (identical prompts of two arms are one call through the store)
    assert {json.dumps(r["messages"], sort_keys=True) for r in rows} == set(sent)
    if kind == "house":
        assert all([m["role"] for m in r["messages"]] == ["system", "user"] for r in rows)
    replay = _answered_world(route, out, rows, tmp_path, monkeypatch, template)
    back = run_world_cmd(world_set, [replay], WORLD_ARMS, out=tmp_path / "back", votes=2, form=form, n_boot=100,
                         permutations=99, progress=False)
    (back_id,) = back.result["provenance"]["judges"]
    a, b = direct.result["judges"][direct_id], back.result["judges"][back_id]
    assert a["arms"]["informed"]["recall"] > a["arms"]["blind"]["recall"]   # the scripted judge needs the world
    assert _strip(a, direct_id) == _strip(b, back_id)
    pa = [p for p in direct.result["paired"] if p.get("judge") == direct_id]
    pb = [p for p in back.result["paired"] if p.get("judge") == back_id]
    assert pa and _strip(pa, direct_id) == _strip(pb, back_id)
    assert back.verdicts["parse_ok"].all() and len(back.verdicts) == len(direct.verdicts)


def _answered_world(route: str, out: Path, rows: list[dict], tmp_path: Path, monkeypatch,
                    template: str | None) -> str:
    """The exported world requests answered by the scripted world judge through ``route``; the replay spec."""
    opt = f"?template={template}" if template else ""
    if route == "jsonl":
        answers = tmp_path / "answers.jsonl"
        answers.write_text("".join(json.dumps({"request_id": r["request_id"], "epoch": r["epoch"],
                                               "raw": scripted_world_reply(r["messages"])}) + "\n" for r in rows))
        return f"replay:{answers}{opt}"
    if route == "inspect":
        pytest.importorskip("inspect_ai")
        seen: list = []
        log = _inspect_eval(out / "inspect_task.py", tmp_path / "logs", monkeypatch, seen, reply=scripted_world_reply)
        assert seen and all(s == [m["role"] for m in rows[0]["messages"]] for s in seen)   # the roles reached it
        return f"replay:inspect:{log.location}"
    results = _promptfoo_results(out, tmp_path / "results.json", reply=scripted_world_reply)
    return f"replay:promptfoo:{results}{opt}"


# ------------------------------------------------------------------------------ 9. promptfoo identity


def _pf_result(test_idx: int, vars_: dict, score: float, *, description: str | None = None, grading=True,
               extra: dict | None = None) -> dict:
    grading_result = {"pass": score >= 0.5, "score": score, "reason": "graded",
                      "componentResults": [{"pass": score >= 0.5, "score": score, "reason": "graded",
                                            "assertion": {"type": "llm-rubric", "value": "is right"}}]}
    return {"id": f"r{test_idx}", "promptIdx": 0, "testIdx": test_idx, "promptId": "p0",
            "testCase": {"vars": vars_, "assert": [{"type": "llm-rubric", "value": "is right"}],
                         **({"description": description} if description else {})},
            "vars": vars_, "provider": {"id": "openai:gpt", "label": ""}, "prompt": {"raw": "x", "label": "x"},
            "response": {"output": "an answer"}, "error": None, "failureReason": 0, "success": True,
            "score": score, "latencyMs": 1, "gradingResult": grading_result if grading else None,
            "namedScores": {}, **(extra or {})}


def _pf_file(path: Path, results: list[dict]) -> Path:
    path.write_text(json.dumps({"evalId": "e", "results": {"version": 3, "results": results, "prompts": [],
                                                           "stats": {}}, "config": {}}))
    return path


def test_tests_that_share_a_description_are_separate_items(tmp_path):
    from judgeaudit.judges.replay import ReplayJudge

    riddles = [{"riddle": "what has keys"}, {"riddle": "what has a neck"}, {"riddle": "what has hands"}]
    path = _pf_file(tmp_path / "r.json", [_pf_result(i, v, s, description="riddles")
                                          for i, (v, s) in enumerate(zip(riddles, [1.0, 0.0, 1.0]))])
    judge = make_judge(f"replay:promptfoo:{path}")
    assert isinstance(judge, ReplayJudge)
    rows = sorted((r["request_id"], r["epoch"], r["score"]) for r in judge.rows())
    assert rows == [("riddles #1", 0, 9.0), ("riddles #2", 0, 1.0), ("riddles #3", 0, 9.0)]


def test_repeats_without_an_id_var_are_epochs_of_one_item(tmp_path):
    # promptfoo eval --repeat 3: every run of a test is its own testIdx, its vars and test case the same
    tests = [{"q": "capital of France?"}, {"q": "2+2?"}]
    results, idx = [], 0
    for repeat, scores in enumerate([(1.0, 0.0), (0.5, 0.0), (1.0, 0.25)]):
        for t, s in zip(tests, scores):
            results.append(_pf_result(idx, t, s))
            idx += 1
    judge = make_judge(f"replay:promptfoo:{_pf_file(tmp_path / 'r.json', results)}")
    rows = sorted((r["request_id"], r["epoch"], r["score"]) for r in judge.rows())
    assert rows == [("test-0", 0, 9.0), ("test-0", 1, 5.0), ("test-0", 2, 9.0),
                    ("test-1", 0, 1.0), ("test-1", 1, 1.0), ("test-1", 2, 3.0)]
    # a result that records its repeatIndex is that epoch
    results = [_pf_result(0, tests[0], 1.0, extra={"repeatIndex": 1}),
               _pf_result(1, tests[0], 0.0, extra={"repeatIndex": 0})]
    judge = make_judge(f"replay:promptfoo:{_pf_file(tmp_path / 'r2.json', results)}")
    assert sorted((r["epoch"], r["score"]) for r in judge.rows()) == [(0, 1.0), (1, 9.0)]


def test_the_assertion_reports_a_failed_judge_call_as_an_error_not_a_grade(tmp_path):
    from judgeaudit.interop.promptfoo import get_assert

    failed = get_assert("an answer", {"vars": {"id": "q1"}, "config": {"judge": "python:pyjudge_callables:boom"}})
    assert failed["pass"] is False and "the call failed" in failed["reason"]
    ok = get_assert("an answer", {"vars": {"id": "q2"}, "config": {"judge": "python:pyjudge_callables:grade"}})
    grading = [failed, ok]
    results = [_pf_result(i, {"id": f"q{i + 1}"}, g["score"]) for i, g in enumerate(grading)]
    for r, g in zip(results, grading):   # promptfoo records a python assertion's GradingResult as its component
        r["gradingResult"] = {"pass": g["pass"], "score": g["score"], "reason": g["reason"],
                              "componentResults": [{**g, "assertion": {"type": "python", "value": "file://a.py"}}]}
    judge = make_judge(f"replay:promptfoo:{_pf_file(tmp_path / 'r.json', results)}")
    v1, v2 = run(judge, [JudgeRequest(request_id="q1", form="graded", text="x"),
                         JudgeRequest(request_id="q2", form="graded", text="x")], progress=False)
    assert v1.error is not None and "cannot judge" in v1.error and v1.score is None
    import pyjudge_callables as cb

    assert v2.error is None and v2.score == cb.expected_grade("an answer")


# ------------------------------------------------------------------------------ 10. Inspect scales


def _hand_log(path, samples):
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSpec, write_eval_log

    spec = EvalSpec(created="2026-12-01T00:00:00+00:00", task="hand", dataset=EvalDataset(),
                    model="mockllm/model", config=EvalConfig())
    write_eval_log(EvalLog(eval=spec, samples=samples), str(path))
    return path


def test_inspect_values_are_read_on_the_scale_the_log_or_user_declares(tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.scorer import Score

    def sample(sid, value, error=None):
        return EvalSample(id=sid, epoch=1, input="q", target="t", scores={"s": Score(value=value)},
                          error=error and EvalError(message=error, traceback="", traceback_ansi=""))

    reqs = [JudgeRequest(request_id=i, form="graded", text="x") for i in ("a", "b", "c")]
    # a 0/1 scorer: 1.0 is not the judges' 1 (the least overreach) — without a scale it is refused
    binary = _hand_log(tmp_path / "binary.json", [sample("a", 1.0), sample("b", 0.0), sample("c", 1.0)])
    with pytest.raises(InputError) as e:
        make_judge(f"replay:inspect:{binary}")
    assert e.value.field == "scale" and "declares no scale" in str(e.value)
    judge = make_judge(f"replay:inspect:{binary}?scale=pass_fail")
    assert [v.score for v in run(judge, reqs, progress=False)] == [1.0, 0.0, 1.0]
    assert judge.scale.pass_fail and judge.scale.higher == "better"
    judge = make_judge(f"replay:inspect:{binary}?scale=0,1&higher=worse")
    assert judge.scale.higher == "worse" and [v.score for v in run(judge, reqs, progress=False)] == [1.0, 0.0, 1.0]
    # C/I: a pass/fail verdict (C = pass), not 9 and 1 on the judges' overreach scale
    ci = _hand_log(tmp_path / "ci.json", [sample("a", "C"), sample("b", "I"), sample("c", "C")])
    judge = make_judge(f"replay:inspect:{ci}")
    assert judge.scale.pass_fail and [v.score for v in run(judge, reqs, progress=False)] == [1.0, 0.0, 1.0]
    # a scale in the scores' metadata (the exported task's) is read as declared
    meta = {"judgeaudit": {"scale": {"kind": "integer", "min": 1, "max": 10, "higher": "better", "label": "1-10"}}}
    tens = _hand_log(tmp_path / "tens.json", [
        EvalSample(id=i, epoch=1, input="q", target="t", scores={"s": Score(value=v, metadata=meta)})
        for i, v in (("a", 10), ("b", 1), ("c", 7))])
    judge = make_judge(f"replay:inspect:{tens}")
    assert (judge.scale.min, judge.scale.max, judge.scale.higher) == (1, 10, "better")
    assert [v.score for v in run(judge, reqs, progress=False)] == [10.0, 1.0, 7.0]
    with pytest.raises(InputError) as e:
        make_judge(f"replay:inspect:{tens}?scale=1,9&higher=worse")
    assert e.value.field == "scale"


def test_an_errored_sample_rescored_afterwards_is_a_failure(tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.scorer import Score

    log = _hand_log(tmp_path / "err.json", [
        EvalSample(id="a", epoch=1, input="q", target="t", scores={"s": Score(value="C")}),
        EvalSample(id="b", epoch=1, input="q", target="t", scores={"s": Score(value="C")},
                   error=EvalError(message="RuntimeError: the model timed out", traceback="", traceback_ansi=""))])
    judge = make_judge(f"replay:inspect:{log}")
    a, b = run(judge, [JudgeRequest(request_id=i, form="graded", text="x") for i in ("a", "b")], progress=False)
    assert a.error is None and a.score == 1.0
    assert b.error == "Inspect sample error: RuntimeError: the model timed out" and b.score is None
    assert not b.parse_ok
