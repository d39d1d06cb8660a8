"""Judge templates: the file format, strict rendering, identity in the call key, the built-in library."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from judgeaudit.errors import InputError
from judgeaudit.judges import elicit, make_judge
from judgeaudit.judges.base import JudgeSpec, call_key
from judgeaudit.judges.templates import default_for, get_template, library, parse_template
from judgeaudit.records import JudgeRequest

GRADED = JudgeRequest(request_id="b1", text="The drug lowers blood pressure in everyone.",
                      evidence="Trials in 400 adults over 65 found the drug lowered systolic blood pressure.",
                      criterion=elicit.OVERREACH_CRITERION)
PAIR = JudgeRequest(request_id="p1", form="pairwise", prompt="Name a prime.", response_a="7", response_b="8")
# the call keys of these two requests for this api judge, computed by the code before templates existed
KNOWN_KEYS = {"b1": "033652bf6807fa68e87488493880696c0462982a8e89531ae6766271e4b034f2",
              "p1": "e371696c8d6ef5626e57c743e01ea32bf540ce37aecb037869e907ec06fb9f37"}
BASE = "http://127.0.0.1:8000/v1"

MINE = """\
name: my-grader
version: "3"
form: graded
scale: {min: 1, max: 10}
system: You grade answers.
user: |-
  Question: {{ prompt }}
  Answer: {{ text }}
  Reply "Rating: [[N]]".
parser: "[[rating]]"
"""


def test_the_default_call_keys_do_not_change():
    spec = JudgeSpec(id="api:openai/gpt-4o-mini", backend="api", model="openai/gpt-4o-mini", family="openai",
                     params={}, template_version=elicit.TEMPLATE_VERSION, endpoint=BASE)
    assert spec.fingerprint() == "545a91954982c50a"
    for r in (GRADED, PAIR):
        assert call_key(spec, elicit.render(r), 0) == KNOWN_KEYS[r.request_id]
    # naming the built-in default template is the default judge: the same keys
    for named in (None, "judgeaudit-graded"):
        j = make_judge("api:openai/gpt-4o-mini", api_base=BASE, family="openai", template=named)
        assert j.key(GRADED) == KNOWN_KEYS["b1"] and j.key(PAIR) == KNOWN_KEYS["p1"]


@pytest.mark.parametrize("form", ["graded", "pairwise", "defects"])
def test_the_default_entries_render_the_same_bytes_as_elicit(form):
    t = default_for(form)
    reqs = {
        "graded": [GRADED, GRADED.model_copy(update={"criterion": "Is it polite?"}),
                   GRADED.model_copy(update={"evidence": None, "criterion": None}),
                   GRADED.model_copy(update={"evidence": "", "criterion": "C"})],
        "pairwise": [PAIR, PAIR.model_copy(update={"criterion": "Which is briefer?"})],
        "defects": [JudgeRequest(request_id="d", form="defects", text="T"),
                    JudgeRequest(request_id="d2", form="defects", text="T", evidence="E", criterion="C")],
    }[form]
    for r in reqs:
        assert t.render(r) == elicit.render(r)


def test_a_template_enters_the_call_key_by_name_version_and_text(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text(MINE)
    r = GRADED.model_copy(update={"prompt": "Is it true?"})
    base = make_judge("api:openai/gpt-4o-mini", api_base=BASE)
    mine = make_judge("api:openai/gpt-4o-mini", api_base=BASE, template=str(f))
    assert mine.spec.template == {"name": "my-grader", "version": "3", "sha256": mine.template.sha256[:16]}
    assert mine.key(r) != base.key(r)
    assert mine.render(r) == ("[system]\nYou grade answers.\n[user]\nQuestion: Is it true?\n"
                              "Answer: The drug lowers blood pressure in everyone.\nReply \"Rating: [[N]]\".")
    # the same template named in the spec string gives the same judge
    inline = make_judge(f"api:openai/gpt-4o-mini?template={f}", api_base=BASE, id=mine.id)
    assert inline.key(r) == mine.key(r) and inline.spec.model == "openai/gpt-4o-mini"
    # the recipe carries the template, so a worker rebuilding the judge renders the same prompts
    spec, opts = mine.recipe
    assert make_judge(spec, **opts).spec == mine.spec
    # another version, or another text under the same version, is another instrument
    f.write_text(MINE.replace('version: "3"', 'version: "4"'))
    assert make_judge("api:openai/gpt-4o-mini", api_base=BASE, template=str(f)).key(r) != mine.key(r)
    f.write_text(MINE.replace("You grade answers.", "You grade answers strictly."))
    assert make_judge("api:openai/gpt-4o-mini", api_base=BASE, template=str(f)).key(r) != mine.key(r)


def test_a_field_the_request_lacks_is_refused_before_any_call(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text(MINE)
    j = make_judge("api:openai/gpt-4o-mini", api_base=BASE, template=str(f))
    with pytest.raises(InputError, match=r"'prompt' is undefined: request b1 has no such field"):
        j.key(GRADED)   # the executor computes every key before it makes any call
    with pytest.raises(InputError, match="answers graded requests, not pairwise"):
        j.key(PAIR)


@pytest.mark.parametrize(("text", "line", "field", "message"), [
    ("name: x\nversion: 1\nform: graded\nuser: hi\n", 1, "scale", "needs a scale"),   # absent: the first line
    ("name: x\nversion: 1\nform: rubric\nscale: {min: 1, max: 5}\nuser: hi\n", 3, "form", "form must be one of"),
    ("name: x\nversion: 1\nform: graded\nscale: {min: 5, max: 1}\nuser: hi\n", 4, "scale", "must be above min"),
    ("name: x\nversion: 1\nform: graded\nscale: {min: 1, max: 5}\nuser: hi\nparser: '[[A>B]]'\n", 6, "parser",
     "reads pairwise replies, not graded"),
    ("name: x\nversion: 1\nform: graded\nscale: {min: 1, max: 5}\nuser: hi\nparser: {regex: 'S: (\\d)'}\n", 6,
     "parser", "needs a named group"),
    ("name: x\nversion: 1\nform: graded\nscale: {min: 1, max: 5}\nuser: '{{ text '\n", 5, "user", "Jinja2 syntax"),
    ("name: x\nversion: 1\nform: graded\nscale: {min: 1, max: 5}\nuser: hi\ncolour: red\n", 6, "colour",
     "Extra inputs"),
    ("name: x\nversion: 1\nform: graded\nscale: {min: 1, max: 5}\n", 1, "user", "required field is missing"),
    ("name: [x\n", 2, None, "malformed YAML"),
])
def test_bad_template_files_name_the_line_and_field(text, line, field, message):
    with pytest.raises(InputError) as e:
        parse_template(text, path="t.yaml")
    assert e.value.path == "t.yaml" and e.value.line == line and e.value.field == field, str(e.value)
    assert message in e.value.message


def test_the_library_names_its_sources_and_parses_its_own_format():
    lib = library()
    assert {"judgeaudit-graded", "judgeaudit-pairwise", "judgeaudit-defects", "mt-bench-single", "mt-bench-pair",
            "arena-hard-pair", "prometheus-absolute", "prometheus-relative", "llmbar-vanilla", "llmbar-rules",
            "llmbar-cot", "llmbar-swap", "geval"} <= set(lib)
    for t in lib.values():
        assert t.source, t.name
    replies = {"mt-bench-single": ("Good answer.\n\nRating: [[7]]", 7.0), "geval": ("Score (1-5): 4", 4.0),
               "prometheus-absolute": ("Feedback: it covers the rubric. [RESULT] 4", 4.0),
               "mt-bench-pair": ("A is accurate. [[C]]", "tie"), "arena-hard-pair": ("My final verdict is: [[B>>A]]", "B"),
               "prometheus-relative": ("Feedback: B is faithful. [RESULT] B", "B"),
               "llmbar-vanilla": ("Output (b)", "B"), "llmbar-rules": ("Output (a)", "A"),
               "llmbar-cot": ("Output (b) pads the answer.\nTherefore, Output (a) is better.", "A"),
               "llmbar-swap": ("Therefore, Output (b) is better.", "B")}
    for name, (reply, want) in replies.items():
        t = lib[name]
        r = t.parse(PAIR if t.form == "pairwise" else GRADED, reply)
        assert r.ok and (r.score if t.form == "graded" else r.choice) == want, (name, r)
    assert lib["arena-hard-pair"].parse(PAIR, "[[B>>A]]").strength == 2
    assert not lib["mt-bench-single"].parse(GRADED, "Rating: [[7.5]]").ok
    assert not lib["mt-bench-single"].parse(GRADED, "Score: 7").ok   # its own format only
    assert lib["mt-bench-single"].scale.label() == "1-10" and lib["mt-bench-single"].scale.higher == "better"


@pytest.mark.skipif(not os.environ.get("JUDGEAUDIT_DATA_DIR"), reason="JUDGEAUDIT_DATA_DIR is not set")
def test_the_mt_bench_entries_carry_the_published_prompts():
    """FastChat's judge_prompts.jsonl, rendered with its own placeholders, is what our entries send."""
    path = Path(os.environ["JUDGEAUDIT_DATA_DIR"]) / "mt_bench" / "judge_prompts.jsonl"
    prompts = {(o := json.loads(line))["name"]: o for line in path.read_text().splitlines() if line.strip()}
    q, a, b, ref = "What is 2+2?", "4", "5", "4, by addition."
    cases = {
        "mt-bench-single": ("single-v1", JudgeRequest(request_id="s", prompt=q, text=a),
                            {"question": q, "answer": a}),
        "mt-bench-single-reference": ("single-math-v1", JudgeRequest(request_id="s", prompt=q, text=a, reference=ref),
                                      {"question": q, "answer": a, "ref_answer_1": ref}),
        "mt-bench-pair": ("pair-v2", JudgeRequest(request_id="p", form="pairwise", prompt=q, response_a=a,
                                                  response_b=b), {"question": q, "answer_a": a, "answer_b": b}),
        "mt-bench-pair-reference": ("pair-math-v1", JudgeRequest(request_id="p", form="pairwise", prompt=q,
                                                                 response_a=a, response_b=b, reference=ref),
                                    {"question": q, "answer_a": a, "answer_b": b, "ref_answer_1": ref}),
    }
    for name, (source, request, fields) in cases.items():
        t = get_template(name)
        system, user = t.render_parts(request)
        assert system == prompts[source]["system_prompt"]
        assert user == prompts[source]["prompt_template"].format(**fields)
        assert t.version == source


def test_a_template_on_a_backend_with_no_prompt_is_refused():
    with pytest.raises(InputError, match="takes no template"):
        make_judge("reference:constant", template="mt-bench-single")
    with pytest.raises(InputError, match="unknown template"):
        make_judge("api:openai/gpt-4o-mini", template="no-such-template")


def test_a_world_template_names_the_world_blocks_and_reads_with_the_world_parser(tmp_path):
    import judgeaudit.world.requests  # noqa: F401 - registers the world family

    f = tmp_path / "world.yaml"
    f.write_text("""\
name: my-world-judge
version: "1"
family: world
form: label
system: You check outputs against their source.
user: |-
  {{ world if world is defined else "No source is shown." }}

  {{ output }}

  {{ answer }}
""")
    j = make_judge("api:openai/gpt-4o-mini", api_base=BASE, template=str(f))
    informed = JudgeRequest(request_id="w", form="label", text="Lyon is the capital.", evidence="Paris is the capital.",
                            meta={"template": "world"})
    blind = informed.model_copy(update={"evidence": None})
    assert "Source material:\nParis is the capital." in j.render(informed)
    assert "No source is shown." in j.render(blind) and "Output:\nLyon is the capital." in j.render(blind)
    assert j.template.parse(informed, 'Here: {"defective": true}').label is True
    assert not j.template.parse(informed, '{"defective": "yes"}').ok


def test_a_generate_template_frames_the_prompt(tmp_path):
    f = tmp_path / "gen.yaml"
    f.write_text("name: house-style\nversion: '1'\nform: generate\nsystem: Answer as our reviewers do.\n"
                 "user: '{{ prompt }}'\n")
    j = make_judge("api:openai/gpt-4o-mini", api_base=BASE, template=str(f))
    r = JudgeRequest(request_id="g", form="generate", prompt="Review this answer.")
    assert j.template.messages(r) == [{"role": "system", "content": "Answer as our reviewers do."},
                                      {"role": "user", "content": "Review this answer."}]
    assert j.template.parse(r, "Looks right.").ok and not j.template.parse(r, " ").ok
