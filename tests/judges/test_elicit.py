from judgeaudit.judges import elicit
from judgeaudit.records import JudgeRequest


def test_graded_parser_is_strict():
    assert elicit.parse_graded("Score: 7").score == 7.0
    assert elicit.parse_graded("**Score:** 3 because it overreaches").score == 3.0
    assert elicit.parse_graded("4").score == 4.0
    for bad in ["", "Score: 10", "no idea", "Score: 3 ... Score: 8", "0", "4.5"]:
        assert not elicit.parse_graded(bad).ok, bad


def test_pairwise_parser_takes_the_last_verdict():
    r = elicit.parse_pairwise("A is vague. Verdict: B")
    assert r.ok and r.choice == "B" and r.rationale == "A is vague."
    assert elicit.parse_pairwise("verdict: TIE").choice == "tie"
    assert elicit.parse_pairwise("Verdict: A\nOn reflection... Verdict: B").choice == "B"
    assert not elicit.parse_pairwise("Both are fine.").ok


def test_defect_parser():
    r = elicit.parse_defects('Here: [{"span": "all patients", "reason": "overclaims", "citation": "40 adults"}]')
    assert r.ok and r.defects[0].span == "all patients" and r.defects[0].citation == "40 adults"
    assert elicit.parse_defects("[]").ok and elicit.parse_defects("[]").defects == []
    assert not elicit.parse_defects('[{"span": 1}]').ok
    assert not elicit.parse_defects("none").ok


def test_graded_prompt_ends_in_the_score_label_and_shares_its_prefix():
    a = elicit.render_graded(JudgeRequest(request_id="a", text="claim one", evidence="ev"))
    b = elicit.render_graded(JudgeRequest(request_id="b", text="claim two", evidence="ev"))
    assert a.endswith("Claim: claim one\nScore:") and a.startswith(elicit.graded_prefix())
    assert b.startswith(elicit.graded_prefix())
