"""``judgeaudit check ifeval`` on Google's shipped GPT-4 responses (every prompt, strict and loose).

Expected values:

* judgeaudit's checker (the released rules, with ``letter_frequency`` counting the character it
  is given) on ``input_data.jsonl`` × ``input_response_data_gpt4_20231107_145030.jsonl``:
  instruction level 698/834 = 0.8369 strict and 714/834 = 0.8561 loose (the values commonly cited
  for this file pair); prompt level 417/541 strict and 431/541 loose.
* The released google-research checker replaces a ``letter_frequency`` letter outside a-z with a
  random letter, drawn afresh for the strict and for the loose pass, unseeded. Two prompts ask for
  such a character: key 1122 ("#" at least 4 times) and key 1129 ("!" at least 6 times); both
  responses pass every other instruction. Its numbers are therefore a distribution, and the paper's
  (Zhou et al. 2023, Table 3: GPT-4 76.89 / 83.57 / 79.30 / 85.37 = 416/541, 697/834, 429/541,
  712/834) are one draw from it: one of the two failing strictly, both failing loosely.
"""

from __future__ import annotations

import json

import pytest

from judgeaudit.checkers.ifeval.data import join, read_items, read_responses
from judgeaudit.commands.check import run_ifeval
from judgeaudit.errors import InputError

pytestmark = pytest.mark.data

RESPONSES = "input_response_data_gpt4_20231107_145030.jsonl"


@pytest.fixture(scope="module")
def official(tmp_path_factory):
    import os
    from pathlib import Path

    root = os.environ.get("JUDGEAUDIT_DATA_DIR")
    if not root or not (Path(root) / "ifeval").is_dir():
        pytest.skip("JUDGEAUDIT_DATA_DIR with ifeval/ is not available")
    d = Path(root) / "ifeval"
    out = tmp_path_factory.mktemp("ifeval")
    # the published counts join prompt 2785 (edited upstream after the responses) by line position
    return d, out, run_ifeval(d / "input_data.jsonl", d / RESPONSES, out, join_by="position")


def counts(r, k):
    return r[k]["passed"], r[k]["total"]


def test_four_accuracies_with_counts(official):
    _, _, r = official
    assert counts(r, "prompt_level_strict") == (417, 541)
    assert counts(r, "instruction_level_strict") == (698, 834)
    assert counts(r, "prompt_level_loose") == (431, 541)
    assert counts(r, "instruction_level_loose") == (714, 834)
    assert round(r["instruction_level_strict"]["value"], 4) == 0.8369
    assert round(r["instruction_level_loose"]["value"], 4) == 0.8561


def test_the_released_checkers_random_letter_gives_the_paper_numbers_as_one_draw(official):
    from collections import Counter
    from string import ascii_lowercase

    d, _, r = official
    rel = r["released_checker"]
    assert [x["key"] for x in rel["drawn"]["strict"]] == [1122, 1129] == [x["key"] for x in rel["drawn"]["loose"]]
    for p in (p for p in r["per_prompt"] if p["key"] in (1122, 1129)):
        assert all(i["strict"] and i["loose"] for i in p["instructions"])  # so each draw decides its prompt
    # the probability of each coin, by hand: the share of the 26 letters the response has often enough
    text = {x.prompt: x.response for x in read_responses(d / RESPONSES)}
    prompt = {it.key: it.prompt for _, it in read_items(d / "input_data.jsonl")}
    hand = {k: sum(Counter(text[prompt[k]].lower())[c] >= n for c in ascii_lowercase) / 26
            for k, n in ((1122, 4), (1129, 6))}
    assert {x["key"]: x["p_follow"] for x in rel["drawn"]["strict"]} == hand
    p1, p2 = hand[1122], hand[1129]
    for k, ours in (("prompt_level_strict", 417), ("instruction_level_strict", 698),
                    ("prompt_level_loose", 431), ("instruction_level_loose", 714)):
        dist = rel[k]["distribution"]
        assert (rel[k]["min"], rel[k]["max"]) == (ours - 2, ours)
        assert dist[str(ours)] == pytest.approx(p1 * p2)
        assert dist[str(ours - 1)] == pytest.approx(p1 * (1 - p2) + (1 - p1) * p2)
        assert dist[str(ours - 2)] == pytest.approx((1 - p1) * (1 - p2))
    # the paper's counts: one coin failing strictly, both failing loosely — each in the support
    for k, paper in (("prompt_level_strict", 416), ("instruction_level_strict", 697),
                     ("prompt_level_loose", 429), ("instruction_level_loose", 712)):
        assert rel[k]["distribution"][str(paper)] > 0.1
    assert [round(x * 100, 2) for x in (416 / 541, 697 / 834, 429 / 541, 712 / 834)] == [76.89, 83.57, 79.3, 85.37]


def test_edited_prompt_is_joined_by_line_and_reported(official):
    d, _, r = official
    [f] = r["joined_by_position"]
    assert (f["key"], f["line"]) == (2785, 340)
    assert "at least 3 placeholders" in f["prompt"] and "at least one placeholder" in f["response_prompt"]
    # by exact text alone, key 2785 has no response
    items = read_items(d / "input_data.jsonl")
    responses = read_responses(d / RESPONSES)
    moved = [x for x in responses if x.line != 340]
    with pytest.raises(InputError, match="no response for prompt key 2785"):
        join(items, moved)


def test_per_instruction_rows_and_per_type_counts(official):
    _, out, r = official
    rows = [json.loads(line) for line in (out / "units.jsonl").read_text().splitlines()]
    assert len(rows) == r["n_instructions"] == 834
    assert sum(x["strict"] for x in rows) == 698 and sum(x["loose"] for x in rows) == 714
    assert (out / "units.parquet").is_file()
    t = r["per_instruction_type"]
    assert len(t) == 25 and sum(v["total"] for v in t.values()) == 834
    assert t["punctuation:no_comma"] == {"total": 66, "strict": 44, "loose": 48}
    saved = json.loads((out / "result.json").read_text())
    assert saved["prompt_level_strict"] == r["prompt_level_strict"]


def test_nltk_punkt_with_the_shipped_parameters_splits_like_the_packages_own_tokenizer(official):
    import punkt

    from judgeaudit.checkers.ifeval import text as tx

    d, _, _ = official
    own = punkt.PunktSentenceTokenizer(punkt.load_model("english"))
    texts = [x.response for x in read_responses(d / RESPONSES)]
    differ = [i for i, t in enumerate(texts) if tx.split_sentences(t) != own.tokenize(t)]
    assert (len(texts), differ) == (541, [])
    assert sum(len(tx.split_sentences(t)) for t in texts) == sum(len(own.tokenize(t)) for t in texts) > 5000
