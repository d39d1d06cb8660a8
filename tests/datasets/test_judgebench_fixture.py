"""The package's JudgeBench-format fixture: written by its script byte for byte, labelled right by the arithmetic
and ordering its questions state, and in JudgeBench's own file format (compared with the user's copy)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from judgeaudit.datasets import judgebench

from cap_data import FIXTURE, full

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_judgebench_fixture.py"


def _records(folder):
    return {f.relative_to(folder).as_posix(): [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines()]
            for f in sorted(folder.rglob("*.jsonl"))}


def test_fixture_is_what_its_script_writes(tmp_path):
    spec = importlib.util.spec_from_file_location("make_judgebench_fixture", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.build(tmp_path)
    made = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.jsonl"))
    shipped = sorted(p.relative_to(FIXTURE).as_posix() for p in FIXTURE.rglob("*.jsonl"))
    assert made == shipped and len(made) == 7
    for rel in made:
        assert (tmp_path / rel).read_bytes() == (FIXTURE / rel).read_bytes(), rel


def _pairs():
    return [r for rows in _records(FIXTURE / "data").values() for r in rows]


def _right_and_wrong(r):
    a_right = r["label"] == "A>B"
    return (r["response_A"], r["response_B"]) if a_right else (r["response_B"], r["response_A"])


def test_math_labels_are_the_progression_sum():
    rows = [r for r in _pairs() if r["source"] == "livebench-math"]
    assert len(rows) == 10
    for r in rows:
        n, a, a2 = map(int, re.search(r"first (\d+) terms of the arithmetic progression (\d+), (\d+),", r["question"]).groups())
        d = a2 - a
        total = sum(a + k * d for k in range(n))
        right, wrong = _right_and_wrong(r)
        assert re.findall(r"\\boxed\{(-?\d+)\}", right) == [str(total)]
        assert re.findall(r"\\boxed\{(-?\d+)\}", wrong) != [str(total)]


def test_reasoning_labels_follow_the_stated_heights():
    rows = [r for r in _pairs() if r["source"] == "livebench-reasoning"]
    assert len(rows) == 10
    for r in rows:
        facts = re.findall(r"(\w+) is taller than (\w+)\.", r["question"])
        people = {p for f in facts for p in f}
        order = []                                                         # tallest first
        while people:
            (top,) = [p for p in people if not any(y == p and x in people for x, y in facts)]
            order.append(top)
            people.remove(top)
        assert all(order.index(x) < order.index(y) for x, y in facts) and len(order) == 4
        q = r["question"]
        k = 3 if "Who is the shortest" in q else {"second": 1, "third": 2}[re.search(r"Who is the (\w+) tallest", q)[1]]
        right, wrong = _right_and_wrong(r)
        assert re.findall(r"\*\*(\w+)\*\*", right) == [order[k]]
        assert re.findall(r"\*\*(\w+)\*\*", wrong) != [order[k]]


def _evaluate(line, nums):
    """The one answer line of a fixture program, on one case, without running the response text: the lines are
    matched against the task's intended computation."""
    return {
        "print(sum(1 for x in nums if x % 2 == 0))": sum(1 for x in nums if x % 2 == 0),
        "print(sum(1 for x in nums if x % 2 == 1))": sum(1 for x in nums if x % 2 == 1),
        "print(max(nums))": max(nums),
        "print(sorted(nums)[-2] if len(nums) > 1 else nums[0])": sorted(nums)[-2] if len(nums) > 1 else nums[0],
        "print(sum(nums))": sum(nums),
        "print(sum(nums[1:]))": sum(nums[1:]),
        "print('YES' if all(a < b for a, b in zip(nums, nums[1:])) else 'NO')":
            "YES" if all(a < b for a, b in zip(nums, nums[1:])) else "NO",
        "print('YES' if all(a <= b for a, b in zip(nums, nums[1:])) else 'NO')":
            "YES" if all(a <= b for a, b in zip(nums, nums[1:])) else "NO",
        "print(len(set(nums)))": len(set(nums)),
        "print(len(nums))": len(nums),
    }[line]


def test_coding_labels_mark_the_program_that_solves_the_task():
    intended = {"count of even numbers": lambda v: sum(1 for x in v if x % 2 == 0), "largest value": max,
                "sum of all values": sum,
                "strictly increasing": lambda v: "YES" if all(a < b for a, b in zip(v, v[1:])) else "NO",
                "number of distinct values": lambda v: len(set(v))}
    rows = [r for r in _pairs() if r["source"] == "livecodebench"]
    assert len(rows) == 10
    probes = [[1, 2, 2, 3], [5, 3, 8], [2, 4, 6, 7, 7], [1, 2, 3], [9]]
    for r in rows:
        (task,) = [f for k, f in intended.items() if k in r["question"]]
        right, wrong = _right_and_wrong(r)
        line_of = lambda text: re.search(r"\n    (print\(.*\))\n```", text)[1]   # noqa: E731
        assert all(_evaluate(line_of(right), v) == task(v) for v in probes)
        assert any(_evaluate(line_of(wrong), v) != task(v) for v in probes)


def test_knowledge_labels_pick_the_option_the_right_working_reaches():
    rows = [r for r in _pairs() if r["source"].startswith("mmlu-pro-")]
    assert len(rows) == 10 and all(isinstance(r["original_id"], int) for r in rows)
    for r in rows:
        q = r["question"]
        options = dict(re.findall(r"^\(([A-J])\) (\d+)$", q, flags=re.M))
        if m := re.search(r"minutes are there in (\d+) hours", q):
            value = 60 * int(m[1])
        elif m := re.search(r"constant (\d+) km/h for (\d+) hours", q):
            value = int(m[1]) * int(m[2])
        elif m := re.search(r"deposit of (\d+) dollars earn at (\d+)% a year over (\d+) years", q):
            value = int(m[1]) * int(m[2]) * int(m[3]) // 100
        elif m := re.search(r"ones are there in the binary representation of (\d+)", q):
            value = bin(int(m[1])).count("1")
        else:
            value = int(re.search(r"are in (\d+) grams of water", q)[1]) // 18
        (letter,) = [k for k, v in options.items() if int(v) == value]
        right, wrong = _right_and_wrong(r)
        answer = lambda text: re.findall(r"^([A-J])\1{4}$", text, flags=re.M)   # noqa: E731
        assert answer(right) == [letter] and answer(wrong) != [letter]


def test_fixture_simulated_judges_as_planted():
    """The reward models score each response on its own (the swapped game mirrors the first); the
    correctness model's score separates right from wrong by the planted 2 points on average."""
    files = judgebench.output_files(FIXTURE)
    for jid in ("reward_model/fixture-org_fixture-rm-correctness", "reward_model/fixture-org_fixture-rm-length",
                "reward_model/fixture-org_fixture-rm-noise"):
        for r in judgebench.raw_outputs(files[jid]):
            g1, g2 = r["judgments"]
            assert g2["judgment"]["scores"] == g1["judgment"]["scores"][::-1]
    gaps = []
    for r in judgebench.raw_outputs(files["reward_model/fixture-org_fixture-rm-correctness"]):
        s_a, s_b = r["judgments"][0]["judgment"]["scores"]
        gaps.append(s_a - s_b if r["label"] == "A>B" else s_b - s_a)
    assert 1.0 < sum(gaps) / len(gaps) < 3.0                     # 2 points, N(0, 2) noise on the gap, 20 pairs


def _shape(value):
    """The field structure of a record (names and JSON types, recursively), not its content."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return ["list"]
    return type(value).__name__ if value is not None else "null"


@pytest.mark.data
def test_fixture_has_judgebench_file_format():
    """Same folders, file-name pattern, record fields and game structure as the user's copy of JudgeBench."""
    real = full("judgebench")
    name = re.compile(r"dataset=judgebench,response_model=[^,]+(,judge_name=[^,]+,judge_model=[^,]+)?\.jsonl$")
    for folder in ("data", "outputs"):
        assert all(name.fullmatch(p.name) for p in (real / folder).glob("*.jsonl"))
        assert all(name.fullmatch(p.name) for p in (FIXTURE / folder).glob("*.jsonl"))
    real_pair = json.loads((sorted((real / "data").glob("*.jsonl"))[0]).open(encoding="utf-8").readline())
    for rows in _records(FIXTURE / "data").values():
        assert all(list(r) == list(real_pair) for r in rows)
    real_out = {}
    for f in (real / "outputs").glob("*.jsonl"):
        rec = json.loads(f.open(encoding="utf-8").readline())
        real_out[rec["judge_name"]] = rec
    for rows in _records(FIXTURE / "outputs").values():
        for r in rows:
            ref = real_out[r["judge_name"]]
            assert list(r) == list(ref)
            for g in r["judgments"]:
                if g is not None:
                    assert set(g) == set(ref["judgments"][0]) and set(g["judgment"]) == set(ref["judgments"][0]["judgment"])
                    assert g["decision"] in {"A>B", "B>A", "A=B", "A>A", None}
