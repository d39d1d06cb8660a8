"""Write judgeaudit's own JudgeBench-format fixture under src/judgeaudit/data/judgebench_fixture/ (deterministic).

Usage: python scripts/make_judgebench_fixture.py [OUT_FOLDER]

The fixture has JudgeBench's file layout, fields and conventions (``data/`` pair files and ``outputs/`` judge
files named ``dataset=judgebench,response_model=…[,judge_name=…,judge_model=…].jsonl``; labels ``A>B``/``B>A``;
two games per pair, the second with the responses swapped and its decision in the swapped frame; Arena-Hard
verdict lines with ``>>`` collapsed to ``>`` in ``decision``; reward-model ``scores`` of the response shown first
and second). Every question, response and judge output is written here by judgeaudit: the items are generated
from small arithmetic, ordering and coding templates whose right answers the script computes, and the judges
are simulated with planted behaviours, so the fixture's numbers can be derived from this file alone:

* ``arena_hard/fixture-judge-positional`` (on writer ``fixture-writer-1``): right with probability 0.6 in each
  game, otherwise it names the response shown first; it answers ``A=B`` on the first pair of each category in
  its first game, its call failed (``null`` game) on the second knowledge pair's swapped game, and its
  swapped-game verdict on the second reasoning pair cannot be read (``A>A``, decision kept as written).
* ``arena_hard/fixture-judge-careful`` (on writer ``fixture-writer-2``): right with probability 0.85 in each game,
  wrong otherwise.
* three reward models (on writer ``fixture-writer-2``), which score each response on its own, so their two games
  mirror each other: ``fixture-org/fixture-rm-correctness`` (2 for a right response, 0 for a wrong one, plus a
  standard Gaussian term), ``fixture-org/fixture-rm-length`` (the response's length in hundreds of characters, plus
  a small Gaussian term) and ``fixture-org/fixture-rm-noise`` (a Gaussian draw).

Licence: the project's own (Apache-2.0); see PROVENANCE.json beside the files.
"""

from __future__ import annotations

import json
import random
import sys
import uuid
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "judgeaudit" / "data" / "judgebench_fixture"
NAMESPACE = uuid.UUID("6f1c1d2e-4b0a-5c1e-9a57-0d8c3a6b2f10")
WRITERS = ("fixture-writer-1", "fixture-writer-2")
PER_CATEGORY = 5
LETTERS = "ABCDEFGHIJ"
MC_TAIL = ("\nIf you are unsure, give your best guess. Write your final answer as the letter of the option "
           "repeated five times (for example, for option C write CCCCC).\nLet's think step by step.")
NAMES = ("Ada", "Boris", "Chen", "Dara", "Eli", "Farah", "Gus", "Hana")


def _options(rng: random.Random, right: int, wrong: int) -> tuple[list[int], str, str]:
    """Ten distinct options holding ``right`` and ``wrong``; (options, right letter, wrong letter)."""
    values = {right, wrong}
    step = max(1, abs(right) // 7)
    k = 1
    while len(values) < 10:
        v = right + k * step if k % 2 else right - k * step
        if v > 0:
            values.add(v)
        k += 1
    opts = sorted(values)
    rng.shuffle(opts)
    return opts, LETTERS[opts.index(right)], LETTERS[opts.index(wrong)]


def _mc(question: str, opts: list[int]) -> str:
    return question + "\n" + "\n".join(f"({LETTERS[i]}) {v}" for i, v in enumerate(opts)) + MC_TAIL


def knowledge(rng: random.Random, i: int) -> tuple[str, str, str, str, int]:
    """(source, question, right response, wrong response, original_id): a ten-option multiple choice."""
    kind = i % 5
    if kind == 0:
        h = rng.randint(3, 19)
        right, wrong = 60 * h, 60 * (h - 1)
        q = f"How many minutes are there in {h} hours?"
        r = f"An hour has 60 minutes, so {h} hours have {h} x 60 = {right} minutes."
        w = f"Counting the hours after the first one, there are {h - 1} x 60 = {wrong} minutes."
        source = "mmlu-pro-math"
    elif kind == 1:
        v, t = rng.randint(30, 90), rng.randint(2, 6)
        right, wrong = v * t, v + t
        q = f"A train moves at a constant {v} km/h for {t} hours. How many kilometres does it cover?"
        r = f"Distance is speed times time: {v} km/h x {t} h = {right} km."
        w = f"Adding the speed and the time gives {v} + {t} = {wrong} km."
        source = "mmlu-pro-physics"
    elif kind == 2:
        p, rate, y = 100 * rng.randint(5, 40), rng.randint(2, 9), rng.randint(2, 5)
        right, wrong = p * rate * y // 100, p * rate // 100
        q = f"What simple interest does a deposit of {p} dollars earn at {rate}% a year over {y} years?"
        r = f"Simple interest is principal x rate x years: {p} x {rate}/100 x {y} = {right} dollars."
        w = f"One year of interest is {p} x {rate}/100 = {wrong} dollars, and that is the interest."
        source = "mmlu-pro-economics"
    elif kind == 3:
        n = rng.randint(9, 60)
        right, wrong = bin(n).count("1"), bin(n).count("0") - 1
        if wrong == right:
            wrong = right + 1
        q = f"How many ones are there in the binary representation of {n}?"
        r = f"{n} in binary is {bin(n)[2:]}, which has {right} ones."
        w = f"{n} in binary is {bin(n)[2:]}; counting its zeros gives {wrong}."
        source = "mmlu-pro-computer science"
    else:
        m = 18 * rng.randint(2, 12)
        right, wrong = m // 18, m // 16
        if wrong == right:
            wrong = right + 1
        q = f"How many moles of water (molar mass 18 g/mol) are in {m} grams of water?"
        r = f"Moles are mass over molar mass: {m} / 18 = {right} mol."
        w = f"Taking the molar mass of water as 16 g/mol gives {m} / 16, about {wrong} mol."
        source = "mmlu-pro-chemistry"
    opts, rl, wl = _options(rng, right, wrong)
    r = f"{r}\nThe matching option is ({rl}).\n{rl * 5}"
    w = f"{w}\nThe matching option is ({wl}).\n{wl * 5}"
    return source, _mc(q, opts), r, w, 1000 + i


def reasoning(rng: random.Random, i: int) -> tuple[str, str, str, str, None]:
    """An ordering puzzle: four people, three 'taller than' facts in shuffled order; who is k-th tallest."""
    people = rng.sample(NAMES, 4)                      # tallest first
    facts = [f"{people[j]} is taller than {people[j + 1]}." for j in range(3)]
    rng.shuffle(facts)
    k = rng.randint(1, 3)
    ordinal = {1: "second", 2: "third", 3: "shortest"}[k]
    q = (f"Four friends compare their heights. {' '.join(facts)} Who is the {ordinal} tallest"
         if k < 3 else f"Four friends compare their heights. {' '.join(facts)} Who is the shortest")
    q += " of the four? Think step by step, then give the name in **bold** (for example, **Name**)."
    chain = " > ".join(people)
    r = f"Chaining the three facts gives the order from tallest to shortest: {chain}.\nSo the answer is **{people[k]}**."
    flipped = people[:k - 1] + [people[k], people[k - 1]] + people[k + 1:]
    w = (f"Reading the facts in the order given, the order from tallest to shortest is {' > '.join(flipped)}.\n"
         f"So the answer is **{flipped[k]}**.")
    return "livebench-reasoning", q, r, w, None


def math_item(rng: random.Random, i: int) -> tuple[str, str, str, str, None]:
    """The sum of an arithmetic progression; the wrong response drops the last term."""
    a, d, n = rng.randint(1, 9), rng.randint(2, 7), rng.randint(6, 15)
    last = a + (n - 1) * d
    right = n * (a + last) // 2
    wrong = right - last
    q = (f"Find the sum of the first {n} terms of the arithmetic progression {a}, {a + d}, {a + 2 * d}, ... "
         "Put your final answer in \\boxed{}.")
    r = (f"The last term is {a} + ({n} - 1) x {d} = {last}. The sum is n(first + last)/2 = {n} x ({a} + {last}) / 2 "
         f"= {right}.\n\\[\n\\boxed{{{right}}}\n\\]")
    w = (f"Adding the terms up to {last - d} (that is {n - 1} terms) gives {wrong}.\n\\[\n\\boxed{{{wrong}}}\n\\]")
    return "livebench-math", q, r, w, None


_CODING = (
    ("Given T test cases, each a line of integers, print for each the count of even numbers.",
     "print(sum(1 for x in nums if x % 2 == 0))", "print(sum(1 for x in nums if x % 2 == 1))"),
    ("Given T test cases, each a line of integers, print for each the largest value.",
     "print(max(nums))", "print(sorted(nums)[-2] if len(nums) > 1 else nums[0])"),
    ("Given T test cases, each a line of integers, print for each the sum of all values.",
     "print(sum(nums))", "print(sum(nums[1:]))"),
    ("Given T test cases, each a line of integers, print for each YES if the values are strictly increasing and NO "
     "otherwise.",
     "print('YES' if all(a < b for a, b in zip(nums, nums[1:])) else 'NO')",
     "print('YES' if all(a <= b for a, b in zip(nums, nums[1:])) else 'NO')"),
    ("Given T test cases, each a line of integers, print for each the number of distinct values.",
     "print(len(set(nums)))", "print(len(nums))"),
)


def coding(rng: random.Random, i: int) -> tuple[str, str, str, str, None]:
    """A small stdin/stdout task; the wrong response's one line is off."""
    task, good, bad = _CODING[i % len(_CODING)]
    t = rng.randint(2, 4)
    example = [[rng.randint(1, 9) for _ in range(rng.randint(3, 5))] for _ in range(t)]
    q = (task + "\n\nInput: the first line holds T; each of the next T lines holds the integers of one case, "
         "separated by spaces.\n\nSample input:\n" + f"{t}\n" + "\n".join(" ".join(map(str, e)) for e in example)
         + "\n\nWrite a Python program that reads standard input and writes standard output.")

    def program(line: str) -> str:
        return ("```python\nimport sys\n\ndata = sys.stdin.read().split('\\n')\nt = int(data[0])\n"
                "for line in data[1:t + 1]:\n    nums = list(map(int, line.split()))\n    " + line + "\n```")

    return "livecodebench", q, "Read every case and compute the answer directly:\n" + program(good), \
        "Read every case and compute the answer:\n" + program(bad), None


CATEGORIES = (knowledge, reasoning, math_item, coding)
PADDING = ("\n\nTo double-check, I went through each step again and the computation above holds; the "
           "reasoning does not depend on any assumption beyond what the question states.")


def pairs_for(writer: str, seed: int) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for make in CATEGORIES:
        for i in range(PER_CATEGORY):
            source, q, right, wrong, original_id = make(rng, i)
            # lengths vary: either response may carry an extra check paragraph
            if rng.random() < 0.5:
                right += PADDING
            if rng.random() < 0.5:
                wrong += PADDING
            if len(wrong) == len(right):   # a length judge always takes a side
                wrong += " I am fairly sure of this."
            right_first = rng.random() < 0.5
            pid = str(uuid.uuid5(NAMESPACE, f"{writer}/{source}/{i}"))
            rows.append({"pair_id": pid, "original_id": original_id, "source": source, "question": q,
                         "response_model": writer,
                         "response_A": right if right_first else wrong,
                         "response_B": wrong if right_first else right,
                         "label": "A>B" if right_first else "B>A"})
    return rows


def _verdict(choice: str, strong: bool) -> tuple[str, str]:
    """(Arena-Hard style verdict line, decision) for a choice 'A', 'B' or 'tie' in the game's own frame."""
    if choice == "tie":
        return "My final verdict is tie: [[A=B]]", "A=B"
    other = "B" if choice == "A" else "A"
    sign = ">>" if strong else ">"
    words = "significantly better" if strong else "slightly better"
    return f"My final verdict is Assistant {choice} is {words}: [[{choice}{sign}{other}]]", f"{choice}>{other}"


def arena_judge(pairs: list[dict], model: str, p_right: float, positional: bool, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    per_cat: dict[str, int] = {}
    for p in pairs:
        cat = "knowledge" if p["source"].startswith("mmlu-pro") else p["source"].split("-")[-1]
        k = per_cat[cat] = per_cat.get(cat, -1) + 1
        games = []
        for game in (0, 1):
            # the right side in this game's own frame (game 1 shows the responses swapped)
            right = p["label"][0] if game == 0 else ("B" if p["label"][0] == "A" else "A")
            if rng.random() < p_right:
                choice = right
            else:
                choice = "A" if positional else ("B" if right == "A" else "A")
            if positional and game == 0 and k == 0:
                choice = "tie"
            text, decision = _verdict(choice, strong=rng.random() < 0.5)
            if positional and cat == "reasoning" and k == 1 and game == 1:
                text, decision = "My final verdict is: [[A>A]]", "A>A"
            entry = {"judgment": {"judge_model": model, "prompt": "",
                                  "response": f"Let me solve the problem myself first and compare.\n\n{text}"},
                     "decision": decision}
            if positional and cat == "knowledge" and k == 1 and game == 1:
                entry = None
            games.append(entry)
        out.append({**p, "judge_name": "arena_hard", "judgments": games})
    return out


def _right(p: dict, side: str) -> bool:
    return p["label"][0] == side


def reward_judge(pairs: list[dict], model: str, kind: str, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for p in pairs:
        score = {}
        for side in ("A", "B"):
            text = p["response_" + side]
            if kind == "correctness":
                s = (2.0 if _right(p, side) else 0.0) + rng.gauss(0, 1.0)
            elif kind == "length":
                s = len(text) / 100 + rng.gauss(0, 0.05)
            else:
                s = rng.gauss(0, 1)
            score[side] = round(s, 4)
        games = []
        for first, second in (("A", "B"), ("B", "A")):
            a, b = score[first], score[second]
            decision = "A>B" if a > b else ("B>A" if b > a else "A=B")
            games.append({"judgment": {"judge_model": model, "prompt": "", "response": "", "scores": [a, b]},
                          "decision": decision})
        out.append({**p, "judge_name": "reward_model", "judgments": games})
    return out


def write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def build(out: Path) -> None:
    pairs = {w: pairs_for(w, seed) for w, seed in zip(WRITERS, (11, 22))}
    for w, rows in pairs.items():
        write(out / "data" / f"dataset=judgebench,response_model={w}.jsonl", rows)

    def output(w: str, name: str, model: str, rows: list[dict]) -> None:
        write(out / "outputs" / f"dataset=judgebench,response_model={w},judge_name={name},"
                                f"judge_model={model.replace('/', '_')}.jsonl", rows)

    w1, w2 = WRITERS
    output(w1, "arena_hard", "fixture-judge-positional",
           arena_judge(pairs[w1], "fixture-judge-positional", 0.6, True, 31))
    output(w2, "arena_hard", "fixture-judge-careful",
           arena_judge(pairs[w2], "fixture-judge-careful", 0.85, False, 32))
    for kind, seed in (("correctness", 41), ("length", 42), ("noise", 43)):
        model = f"fixture-org/fixture-rm-{kind}"
        output(w2, "reward_model", model, reward_judge(pairs[w2], model, kind, seed))


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
