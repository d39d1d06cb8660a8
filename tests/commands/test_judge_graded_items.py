"""``judge --input`` on graded items that carry their question (and a reference): the MT-Bench single-answer
graders render the item's prompt as the [Question] and its reference as the reference answer."""

from __future__ import annotations

import json

from fakeserver import FakeServer

from judgeaudit.runtime.requests import read_requests


def test_graded_items_keep_their_prompt_and_reference(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"item_id": "q1", "prompt": "What is 17 * 3?", "text": "51",
                                 "reference": "17 * 3 = 51"}) + "\n")
    (r,) = read_requests(items, "graded")
    assert (r.prompt, r.text, r.reference) == ("What is 17 * 3?", "51", "17 * 3 = 51")


def test_judge_grades_question_answer_items_with_the_mt_bench_graders(tmp_path, cli_main, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(json.dumps({"item_id": f"q{i}", "prompt": f"What is {i} * 3?", "text": str(3 * i),
                                           "reference": f"{i} * 3 = {3 * i}"}) for i in (1, 2)) + "\n")
    seen: list[str] = []

    def responder(prompt: str) -> str:
        seen.append(prompt)
        return "Correct.\n\nRating: [[9]]"

    for template in ("mt-bench-single", "mt-bench-single-reference"):
        seen.clear()
        out = tmp_path / template
        with FakeServer(responder=responder) as srv:
            r = cli_main("judge", "--judge", f"api:openai/fake-judge?template={template}", "--api-base",
                         srv.base_url, "--input", str(items), "--out", str(out), "--store", str(tmp_path / "s.sqlite"))
        assert r.returncode == 0, r.stderr
        assert len(seen) == 2 and any("[Question]\nWhat is 2 * 3?" in p for p in seen), seen
        if template == "mt-bench-single-reference":
            assert any("[The Start of Reference Answer]\n2 * 3 = 6" in p for p in seen), seen
