"""Each built-in template named after a published judge reads what that judge's own tool reads.

The cases are the original tools' own parser tests and the replies they recorded, each with the verdict
the original tool reads from it. A template must read the same verdict, except where the reply is
ambiguous (it states two verdicts, a range, a decimal on an integer scale or a grade on another scale):
such a reply is refused (a parse failure, counted), never guessed. The reference readers below restate
the original tools' published patterns (cited at each) so that the recorded replies are judged by them.
"""

from __future__ import annotations

import ast
import glob
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from judgeaudit.judges.replies import read_json_path, read_regex
from judgeaudit.judges.scale import Scale
from judgeaudit.judges.templates import library
from judgeaudit.records import JudgeRequest

GRADED = JudgeRequest(request_id="g", form="graded", prompt="Summarise the trial.", text="The drug lowered blood pressure.")
PAIR = JudgeRequest(request_id="p", form="pairwise", prompt="Summarise.", response_a="one", response_b="two")


def _read(name: str, reply: str):
    t = library()[name]
    r = t.parse(PAIR if t.form == "pairwise" else GRADED, reply)
    if not r.ok:
        return None
    return r.score if t.form == "graded" else r.choice


# (template, reply, what the original tool reads, what the template must read; None: a parse failure)
# prometheus-eval libs/prometheus-eval/tests/test_parser.py, every case (absolute and relative)
PROMETHEUS_TESTS = [
    ("prometheus-absolute", "Excellent. [RESULT] 5 out of 5", 5, 5),
    ("prometheus-absolute", "Poor performance. [RESULT] score of 1", 1, 1),
    ("prometheus-absolute", "Good job. [Result] 3", 3, 3),
    ("prometheus-absolute", "Needs improvement. [Result] Score: 2", 2, 2),
    ("prometheus-absolute", "Well done. [Result] Result: 4", 4, 4),
    ("prometheus-absolute", "Average. [Result] 4/5", 4, 4),
    ("prometheus-absolute", "Excellent. [Result] 5 out of 5", 5, 5),
    ("prometheus-absolute", "Poor performance. [Result] score of 1", 1, 1),
    ("prometheus-absolute", "Good job. (Score 5)", 5, 5),
    ("prometheus-absolute", "Good job. [Score 4]", 4, 4),
    ("prometheus-absolute", "Good job. score: 3", 3, 3),
    ("prometheus-absolute", "Good job. Score: 3", 3, 3),
    ("prometheus-absolute", "Good job. score of 1", 1, 1),
    ("prometheus-absolute", "Good job. [RESULT] (5)", 5, 5),
    ("prometheus-absolute", "The score is definitely not 3.", None, None),
    ("prometheus-absolute", "I rate this a perfect 10!", None, None),
    ("prometheus-absolute", "Score: 2.5", None, None),
    ("prometheus-absolute", "Result: A", None, None),
    ("prometheus-relative", "Response A is better. [RESULT] A", "A", "A"),
    ("prometheus-relative", "Prefer Response B. [RESULT] B", "B", "B"),
    ("prometheus-relative", "Feedback: Both responses are similar... [Response B]", "B", "B"),
    ("prometheus-relative", "Feedback: Both responses are clear... [Result] Response B", "B", "B"),
    ("prometheus-relative", "Feedback: Both responses are clear... Response B Response A", None, None),
    ("prometheus-relative", "Feedback: Both responses are clear... [RESULT: B]", "B", "B"),
    ("prometheus-relative", "Feedback: Both responses are clear... [Result: B]", "B", "B"),
    ("prometheus-relative", "Feedback: Both responses are clear...Response A. [RESULT] B", "B", "B"),
    ("prometheus-relative", "After careful consideration, I select Response B.", None, None),
    ("prometheus-relative", "Both responses have their merits.", None, None),
    ("prometheus-relative", "Response C is clearly superior.", None, None),
    ("prometheus-relative", "The better response is obviously B... or is it A? It's hard to decide.", None, None),
]

# replies in the forms the originals' prompts ask for, read by the originals' published patterns
PROMPTED_FORMS = [
    # prometheus-eval parser.py: [RESULT]: is a marker, brackets around the number are allowed
    ("prometheus-absolute", "Feedback: clear and complete. [RESULT]: 4", 4, 4),
    ("prometheus-absolute", "Feedback: clear and complete. [RESULT] Score 4", 4, 4),
    ("prometheus-absolute", "Feedback: thin. [RESULT] 2", 2, 2),
    ("prometheus-relative", "Feedback: B follows the rubric. [RESULT] Response A", "A", "A"),
    ("prometheus-relative", "Feedback: B follows the rubric.\nResult: B", "B", "B"),
    # FastChat common.py one_score_pattern \[\[(\d+\.?\d*)\]\], then one_score_pattern_backup \[(\d+\.?\d*)\]
    ("mt-bench-single", "The answer is correct.\n\nRating: [[8]]", 8, 8),
    ("mt-bench-single", "The answer is correct.\n\nRating: [8]", 8, 8),
    ("mt-bench-single", "Rating: [[10]]", 10, 10),
    ("mt-bench-single", "Rating: [[7.5]]", 7.5, None),          # a decimal on the integer 1-10 scale
    ("mt-bench-single-reference", "It matches the reference. Rating: [9]", 9, 9),
    # FastChat pair-v2: "[[A]]", "[[B]]", "[[C]]" (a tie)
    ("mt-bench-pair", "A is more accurate. [[A]]", "A", "A"),
    ("mt-bench-pair", "Both are equal. [[C]]", "tie", "tie"),
    # G-Eval meta_eval_summeval.py parse_output: a number at the very start of the reply
    ("geval", "4", 4, 4),
    ("geval", " 3", 3, 3),
    ("geval", "5\n", 5, 5),
    ("geval", "4.5", 4.5, None),                                   # a decimal on the integer 1-5 scale
    # Arena-Hard gen_judgment.py get_score: \[\[([AB<>=]+)\]\], one distinct label
    ("arena-hard-pair", "My final verdict is: [[B>>A]]", "B", "B"),
    ("arena-hard-pair", "My final verdict is tie: [[A=B]]", "tie", "tie"),
    ("arena-hard-pair", "[[A>B]] ... on reflection [[B>A]]", None, None),
    # LLMBar CoT config: "Output (a) is better." anywhere in the reply
    ("llmbar-cot", "Output (b) pads the answer.\n\nTherefore, Output (a) is better.", "A", "A"),
    ("llmbar-cot", "Output (a) misses the constraint. Therefore, Output (b) is better.", "B", "B"),
    ("llmbar-swap", "Therefore, Output (b) is better.", "B", "B"),
    # LLMBar Vanilla config: "Output (a)" at the start of the reply
    ("llmbar-vanilla", "Output (b)", "B", "B"),
    ("llmbar-rules", "Output (a)", "A", "A"),
]

# ambiguous replies: the original tools take the first alternative; judgeaudit refuses them
AMBIGUOUS = [
    ("prometheus-absolute", "Feedback: fine. [RESULT] 4/10"),
    ("prometheus-absolute", "Feedback: fine. [RESULT] 3-4"),
    ("prometheus-absolute", "Feedback: fine. [RESULT] 2 out of 10"),
    ("prometheus-absolute", "Feedback: fine. [RESULT] 3.5"),
    ("prometheus-relative", "Feedback: both are good. [RESULT] A or B"),
    ("prometheus-relative", "Feedback: both are good. [RESULT] A/B"),
    ("llmbar-vanilla", "Output (a) or Output (b)"),
    ("llmbar-rules", "Output (a) and Output (b)"),
    ("llmbar-cot", "Therefore, Output (a) is better. Therefore, Output (b) is better."),
    ("mt-bench-single", "Rating: [[7]] ... Rating: [[8]]"),
    ("mt-bench-single", "Rating: [[7-8]]"),
    ("mt-bench-single", "Rating: [[8/20]]"),
]


@pytest.mark.parametrize("name,reply,original,want", PROMETHEUS_TESTS + PROMPTED_FORMS)
def test_a_template_reads_what_its_original_reads(name, reply, original, want):
    assert _read(name, reply) == want


@pytest.mark.parametrize("name,reply", AMBIGUOUS)
def test_an_ambiguous_reply_is_refused(name, reply):
    assert _read(name, reply) is None


# ----------------------------------------------------------------------------- recorded replies

ARENA_LABEL_RE = re.compile(r"\[\[([AB<>=]+)\]\]")      # arena-hard-auto config/judge_config.yaml
ARENA_CHOICE = {"A>>B": "A", "A>B": "A", "A=B": "tie", "B>A": "B", "B>>A": "B"}   # show_result.py


def _arena_hard(reply: str):
    labels = set(ARENA_LABEL_RE.findall(reply))
    return ARENA_CHOICE.get(labels.pop()) if len(labels) == 1 else None


def _llmbar_cot(reply: str):
    reply = reply.strip()
    for label, rx in (("A", r"Output \(a\) is better\."), ("B", r"Output \(b\) is better\.")):
        if re.search(rx, reply):
            return label
    return None


def _llmbar_vanilla(reply: str):
    reply = reply.strip()
    for label, rx in (("A", r"(?:^|\n) ?Output \(a\)"), ("B", r"(?:^|\n) ?Output \(b\)")):
        if re.search(rx, reply):
            return label
    return None


def _fastchat_pair(reply: str):
    for label, word in (("A", "[[A]]"), ("B", "[[B]]"), ("tie", "[[C]]")):
        if word in reply:
            return label
    return None


def _two_verdicts(reply: str, phrases: tuple[str, str]) -> bool:
    return all(p in reply for p in phrases)


def _llmbar_completions(root: Path, strategy: str) -> list[str]:
    out = []
    for f in sorted(glob.glob(str(root / "llmbar/Dataset/**/evaluators/*" / strategy / "result.json"), recursive=True)):
        for row in json.loads(Path(f).read_text()):
            results = row["results"]
            results = ast.literal_eval(results) if isinstance(results, str) else results
            for run in results:
                for v in run.values():
                    out.append(v["completion"][0])
    return out


def _agreement(name: str, replies: list[str], original, both: tuple[str, ...]) -> Counter:
    """Counts of replies the original reads, the template reads, and the disagreements (a reply
    stating both verdicts is ambiguous: the template must refuse it)."""
    c: Counter = Counter()
    for reply in replies:
        want = original(reply)
        got = _read(name, reply)
        ambiguous = len(both) == 2 and _two_verdicts(reply, both)
        c["replies"] += 1
        c["original reads"] += want is not None
        c["template reads"] += got is not None
        if ambiguous:
            c["ambiguous"] += 1
            c["wrong"] += got is not None
        else:
            c["wrong"] += got != want
    return c


def test_recorded_replies_are_read_as_their_originals_read_them(data_dir):
    tables = {}
    arena = []
    for f in sorted(glob.glob(str(data_dir / "judgebench/outputs/*judge_name=arena_hard*.jsonl"))):
        for line in Path(f).read_text().splitlines():
            for j in json.loads(line)["judgments"]:
                arena.append(j["judgment"]["response"])
    tables["arena-hard-pair"] = _agreement("arena-hard-pair", arena, _arena_hard, ())
    cot = _llmbar_completions(data_dir, "CoT")
    for name in ("llmbar-cot", "llmbar-swap"):
        tables[name] = _agreement(name, cot, _llmbar_cot, ("Output (a) is better.", "Output (b) is better."))
    vanilla = _llmbar_completions(data_dir, "Vanilla")
    tables["llmbar-vanilla"] = _agreement("llmbar-vanilla", vanilla, _llmbar_vanilla, ())
    pair = []
    for line in (data_dir / "mt_bench/third_party_judgments/Stefanstud/gpt-4_pair.jsonl").read_text().splitlines():
        row = json.loads(line)
        pair += [row["g1_judgment"], row["g2_judgment"]]
    tables["mt-bench-pair"] = _agreement("mt-bench-pair", pair, _fastchat_pair, ("[[A]]", "[[B]]"))
    for name, c in tables.items():
        assert c["replies"] > 0, name
        assert c["wrong"] == 0, (name, dict(c))


# ----------------------------------------------------------------------------- published prompt texts

# template -> (file under judge_prompts/, the original's placeholders -> the request fields the template uses)
PUBLISHED = {
    "llmbar-vanilla": ("llmbar/comparison/Vanilla_NoRules.txt",
                       {"input": "prompt", "output_1": "response_a", "output_2": "response_b"}),
    "llmbar-rules": ("llmbar/comparison/Vanilla.txt",
                     {"input": "prompt", "output_1": "response_a", "output_2": "response_b"}),
    "llmbar-cot": ("llmbar/comparison/CoT.txt",
                   {"input": "prompt", "output_1": "response_a", "output_2": "response_b"}),
    "llmbar-swap": ("llmbar/comparison/CoT.txt",
                    {"input": "prompt", "output_1": "response_a", "output_2": "response_b"}),
}


def _published_messages(path: Path, fields: dict[str, str]) -> list[dict[str, str]]:
    """An LLMBar ChatML prompt file as messages, its placeholders filled with ``<field>`` markers."""
    text = path.read_text(encoding="utf-8")
    for placeholder, field in fields.items():
        text = text.replace("{" + placeholder + "}", f"<{field}>")
    return [{"role": m.group(1), "content": m.group(2).strip()}
            for m in re.finditer(r"<\|im_start\|>(\w+)\n(.*?)<\|im_end\|>", text, re.DOTALL)]


# template -> (system file, user file, the original's placeholders -> request fields): prompts kept as two files
PUBLISHED_PAIRS = {
    "arena-hard-pair": ("arena_hard/v0.1_judge_system_prompt.txt", "arena_hard/v0.1_judge_prompt_template.txt",
                        {"question_1": "prompt", "answer_1": "response_a", "answer_2": "response_b"}),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED) + sorted(PUBLISHED_PAIRS))
def test_a_template_named_after_a_published_judge_sends_its_published_text(name, data_dir):
    root = data_dir / "judge_prompts"
    if name in PUBLISHED:
        source, fields = PUBLISHED[name]
        want = _published_messages(root / source, fields)
    else:
        system, user, fields = PUBLISHED_PAIRS[name]
        text = (root / user).read_text(encoding="utf-8")
        for placeholder, field in fields.items():
            text = text.replace("{" + placeholder + "}", f"<{field}>")
        want = [{"role": "system", "content": (root / system).read_text(encoding="utf-8").strip()},
                {"role": "user", "content": text.strip()}]
    request = JudgeRequest(request_id="p", form="pairwise", **{f: f"<{f}>" for f in fields.values()})
    got = [{"role": m["role"], "content": m["content"].strip()} for m in library()[name].messages(request)]
    assert got == want


# ----------------------------------------------------------------------------- every parser, user-written too

ONE_TO_FIVE = Scale(min=1, max=5)
AB = {"a": "A", "b": "B"}


@pytest.mark.parametrize("reply,pattern,want", [
    ("[RESULT] 4", r"\[RESULT\]\s*(?P<score>\d+)", 4.0),
    ("[RESULT] 4/5", r"\[RESULT\]\s*(?P<score>\d+)", 4.0),
    ("[RESULT] 4 out of 5", r"\[RESULT\]\s*(?P<score>\d+)", 4.0),
    ("[RESULT] 4/10", r"\[RESULT\]\s*(?P<score>\d+)", None),
    ("[RESULT] 2 out of 10", r"\[RESULT\]\s*(?P<score>\d+)", None),
    ("[RESULT] 3-4", r"\[RESULT\]\s*(?P<score>\d+)", None),
    ("[RESULT] 3 to 4", r"\[RESULT\]\s*(?P<score>\d+)", None),
    ("[RESULT] 3.5", r"\[RESULT\]\s*(?P<score>\d+)", None),
    ("[RESULT] 3.5", r"\[RESULT\]\s*(?P<score>\d+(?:\.\d+)?)", None),
])
def test_a_user_regex_grade_is_checked_as_stated(reply, pattern, want):
    r = read_regex(reply, "graded", ONE_TO_FIVE, pattern)
    assert (r.score if r.ok else None) == want, r


@pytest.mark.parametrize("reply,pattern,want", [
    ("[RESULT] A", r"\[RESULT\]\s*(?P<choice>[AB])", "A"),
    ("[RESULT] A or B", r"\[RESULT\]\s*(?P<choice>[AB])", None),
    ("[RESULT] B / A", r"\[RESULT\]\s*(?P<choice>[AB])", None),
    ("Output (a) or Output (b)", r"^\W*Output \((?P<choice>[ab])\)", None),
    ("Output (a), it follows the instruction", r"^\W*Output \((?P<choice>[ab])\)", "A"),
    ("Output (a) or (b)", r"^\W*Output \((?P<choice>[ab])\)", None),
])
def test_a_user_regex_choice_offering_both_is_refused(reply, pattern, want):
    r = read_regex(reply, "pairwise", ONE_TO_FIVE, pattern, AB)
    assert (r.choice if r.ok else None) == want, r


@pytest.mark.parametrize("reply,form,want", [
    ('{"score": "4/10"}', "graded", None),
    ('{"score": "3-4"}', "graded", None),
    ('{"score": 3.5}', "graded", None),
    ('{"score": "4/5"}', "graded", 4.0),
    ('{"score": 4}', "graded", 4.0),
    ('{"score": "A or B"}', "pairwise", None),
    ('{"score": "B"}', "pairwise", "B"),
])
def test_a_json_path_value_is_checked_as_stated(reply, form, want):
    r = read_json_path(reply, form, ONE_TO_FIVE, "$.score")
    got = (r.score if form == "graded" else r.choice) if r.ok else None
    assert got == want, r


def _prometheus(root: Path, name: str, fill: dict[str, str]) -> str:
    text = (root / "prometheus_eval" / name).read_text(encoding="utf-8")
    for placeholder, value in fill.items():
        text = text.replace("{" + placeholder + "}", value)
    return text


@pytest.mark.parametrize("name,with_reference,with_criterion", [
    ("prometheus-absolute", False, True), ("prometheus-absolute", True, True), ("prometheus-absolute", False, False),
    ("prometheus-relative", False, True), ("prometheus-relative", True, True), ("prometheus-relative", False, False),
])
def test_the_prometheus_templates_send_prometheus_evals_published_text(name, with_reference, with_criterion, data_dir):
    """The rubric (the request's criterion, here prometheus-eval's own REASONING_RUBRIC) fills {rubric} as
    written for absolute grading and by its criterion line for relative grading; without a criterion,
    prometheus-eval's HELPFULNESS_RUBRIC is the default."""
    root = data_dir / "judge_prompts"
    rubric = (root / "prometheus_eval/REASONING_RUBRIC.txt").read_text(encoding="utf-8")
    default = (root / "prometheus_eval/HELPFULNESS_RUBRIC.txt").read_text(encoding="utf-8")
    used = rubric if with_criterion else default
    fields = {"prompt": "<prompt>", "criterion": rubric} if with_criterion else {"prompt": "<prompt>"}
    if with_reference:
        fields["reference"] = "<reference>"
    ref = {"reference_answer": "<reference>"}
    if name == "prometheus-absolute":
        request = JudgeRequest(request_id="g", form="graded", text="<text>", **fields)
        system = "ABS_SYSTEM_PROMPT.txt"
        user = _prometheus(root, "ABSOLUTE_PROMPT.txt" if with_reference else "ABSOLUTE_PROMPT_WO_REF.txt",
                           {"instruction": "<prompt>", "response": "<text>", "rubric": used, **ref})
    else:
        request = JudgeRequest(request_id="p", form="pairwise", response_a="<a>", response_b="<b>", **fields)
        system = "REL_SYSTEM_PROMPT.txt"
        user = _prometheus(root, "RELATIVE_PROMPT.txt" if with_reference else "RELATIVE_PROMPT_WO_REF.txt",
                           {"instruction": "<prompt>", "response_A": "<a>", "response_B": "<b>",
                            "rubric": used.split("\n")[0], **ref})
    want = [{"role": "system", "content": (root / "prometheus_eval" / system).read_text(encoding="utf-8").strip()},
            {"role": "user", "content": user.strip()}]
    got = [{"role": m["role"], "content": m["content"].strip()} for m in library()[name].messages(request)]
    assert got == want


def test_geval_sends_g_evals_published_consistency_form(data_dir):
    """G-Eval's con_detailed.txt byte for byte, {{Document}} the evidence and {{Summary}} the text."""
    text = (data_dir / "judge_prompts/geval/summeval/con_detailed.txt").read_text(encoding="utf-8")
    want = text.replace("{{Document}}", "<evidence>").replace("{{Summary}}", "<text>")
    request = JudgeRequest(request_id="g", form="graded", evidence="<evidence>", text="<text>")
    got = library()["geval"].messages(request)
    assert [m["role"] for m in got] == ["user"]
    assert got[0]["content"] == want


@pytest.mark.parametrize("name,published,form", [
    ("mt-bench-single", "single-v1", "graded"), ("mt-bench-single-reference", "single-math-v1", "graded"),
    ("mt-bench-pair", "pair-v2", "pairwise"), ("mt-bench-pair-reference", "pair-math-v1", "pairwise"),
])
def test_the_mt_bench_templates_send_fastchats_published_text(name, published, form, data_dir):
    rows = [json.loads(line) for line in (data_dir / "mt_bench/judge_prompts.jsonl").read_text().splitlines()]
    (row,) = [r for r in rows if r["name"] == published]
    fill = {"question": "<prompt>", "answer": "<text>", "ref_answer_1": "<reference>", "answer_a": "<a>",
            "answer_b": "<b>"}
    user = row["prompt_template"]
    for placeholder, value in fill.items():
        user = user.replace("{" + placeholder + "}", value)
    fields = {"prompt": "<prompt>", "reference": "<reference>"}
    request = (JudgeRequest(request_id="g", form="graded", text="<text>", **fields) if form == "graded" else
               JudgeRequest(request_id="p", form="pairwise", response_a="<a>", response_b="<b>", **fields))
    got = [{"role": m["role"], "content": m["content"].strip()} for m in library()[name].messages(request)]
    assert got == [{"role": "system", "content": row["system_prompt"].strip()}, {"role": "user", "content": user.strip()}]
