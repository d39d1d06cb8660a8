"""The graded and pairwise parsers on real-looking replies: every reply with the parse it must give.

A reply the parser cannot read unambiguously is a parse failure (``None`` below): counted, never
guessed. A/B are matched case-sensitively as whole words (a lower-case "a" is the English article; a
lower-case "b" is rejected too, so that neither side gains from a lenient spelling), "tie" in any case.
"""

from __future__ import annotations

import pytest

from judgeaudit.judges import elicit

GRADED = [
    # (reply, expected score or None for a parse failure)
    ("Score: 7", 7.0),
    ("7", 7.0),
    (" 7", 7.0),
    ("9", 9.0),
    ("7\n\nThe claim drops the trial's age restriction.", 7.0),
    ("7 (the claim drops the age restriction)", 7.0),
    ("**Score:** 3 because it overreaches", 3.0),
    ("Score: **6**", 6.0),
    ("score = 2", 2.0),
    ("Score: 7.", 7.0),
    ("Score: 5 \n", 5.0),
    ("Score: 7/9", 7.0),
    ("Score: 7 out of 9", 7.0),
    ("Score: 3\nFinal score: 3", 3.0),
    ("The claim generalises from 2 datasets to all tasks.\nScore: 6", 6.0),
    # decimals, ranges, other scales, out-of-scale numbers: failures
    ("Score: 4.5", None),
    ("4.5", None),
    ("Score: 4,5", None),
    ("8 out of 10", None),
    ("Score: 8 out of 10", None),
    ("Score: 8/10", None),
    ("8/10 - mostly supported", None),
    ("2-3", None),
    ("Score: 2-3", None),
    ("Score: 2 – 3", None),
    ("Score: 2 to 3", None),
    ("3 or 4", None),
    ("Score: 10", None),
    ("10", None),
    ("Score: 0", None),
    ("0", None),
    ("Score: -2", None),
    ("Score: 3 ... Score: 8", None),
    # a grade on another scale stated beside it, and list numbers: failures (never the score)
    ("Score: 8 (out of 10)", None),
    ("Score: 8 (/10)", None),
    ("Score: 4 (on a 1-5 scale)", None),
    ("**Score:** 4 (1–5 scale)", None),
    ("Score: 5 (1-10)", None),
    ("Score: 6 on a scale of 1 to 10", None),
    ("Score: 8 on a 10-point scale", None),
    ("On a 1-10 scale: Score: 8", None),
    ("1. The claim widens the trial population to all adults. I would rate it 8.", None),
    ("3) The evidence covers only adults over 65.", None),
    ("Score:\n1. The claim drops the age restriction.\n2. It adds a causal verb.", None),
    # our own scale stated beside the grade, list items before the label, a sentence after it: read
    ("Score: 7 (out of 9)", 7.0),
    ("Score: 3 on a 1-9 scale", 3.0),
    ("Score: 6 (on a scale from 1 to 9)", 6.0),
    ("1) The claim drops the age limit.\n2) It adds a causal verb.\nScore: 7", 7.0),
    ("Score: 1. The claim restates the evidence.", 1.0),
    ("Score: 6 - the claim covers 3 to 5 of the trials", 6.0),
    ("I would rather not say.", None),
    ("", None),
    ("   ", None),
]

PAIRWISE = [
    # (reply, expected choice or None for a parse failure)
    ("Verdict: A", "A"),
    ("Verdict: B", "B"),
    ("Verdict: tie", "tie"),
    ("Verdict: Tie", "tie"),
    ("verdict: TIE", "tie"),
    ("VERDICT: B", "B"),
    ("Verdict:A", "A"),
    ("A is vague. Verdict: B", "B"),
    ("Response B follows the format; Response A ignores it.\nVerdict: B", "B"),
    ("Verdict: A\nOn reflection, B is more accurate.\nVerdict: B", "B"),
    ("**Verdict:** B", "B"),
    ("**Verdict**: A", "A"),
    ("Verdict: **A**", "A"),
    ("Verdict: [[A]]", "A"),
    ("Verdict: [B]", "B"),
    ("Verdict: (B)", "B"),
    ("Verdict: Response A", "A"),
    ("Final verdict: A.", "A"),
    ("Verdict: B - it answers the question that was asked.", "B"),
    # the article "a", lower-case letters, both sides named, free text: failures
    ("Verdict: a tie between the two.", None),
    ("My verdict: a slight edge to B", None),
    ("Verdict: a", None),
    ("Verdict: b", None),
    ("Verdict: Output (b)", None),
    ("Verdict: A or B", None),
    ("Verdict: A and B are equally good", None),
    ("Verdict: A is better; B misses the constraint", None),
    ("Verdict: Both", None),
    ("Verdict: Awesome work by both", None),
    ("Both are fine.", None),
    ("", None),
]


@pytest.mark.parametrize(("reply", "expected"), GRADED)
def test_graded_parse(reply, expected):
    r = elicit.parse_graded(reply)
    assert (r.score if r.ok else None) == expected, (reply, r)
    assert r.ok == (expected is not None) and (r.ok or r.error)


@pytest.mark.parametrize(("reply", "expected"), PAIRWISE)
def test_pairwise_parse(reply, expected):
    r = elicit.parse_pairwise(reply)
    assert (r.choice if r.ok else None) == expected, (reply, r)
    assert r.ok == (expected is not None) and (r.ok or r.error)


@pytest.mark.parametrize(("reply", "expected"), [(r, s) for r, s in GRADED if s is not None])
def test_graded_parse_points_at_the_digit_it_read(reply, expected):
    r = elicit.parse_graded(reply)
    assert r.score_at is not None and reply[r.score_at] == str(int(expected))
