"""The loop report below the minimum each statistic needs: a net and its bootstrap interval over fewer
responses than an interval needs, a rank correlation across fewer regulators than it needs (or with a
constant quantity), and rounds drawn on an axis of whole rounds."""

from __future__ import annotations

import json
import re

from judgeaudit.report.loop import MIN_REGULATORS_FOR_RHO, MIN_RESPONSES_FOR_INTERVAL, loop_sections


def _round(k: int, net: float) -> dict:
    return {"round": k, "pass_rate": 0.5, "loose_pass_rate": 0.5, "fixed": 0, "broken": 1, "net": net,
            "fixed_this_round": 0, "broken_this_round": 1, "net_this_round": net, "acted_on": 1,
            "n_complaints": 1, "precision": 0.5, "false_alarm_rate": 0.5, "break_rate_flagged": None,
            "break_rate_unflagged": None, "n_flagged_followed": None, "n_unflagged_followed": None}


def _result(n_responses: int, regulators: tuple[str, ...], rho: float, p: float, n_rho: int,
            rounds: int = 1) -> dict:
    """A loop result of ``n_responses`` responses (two units each) and one round per ``rounds``, every
    regulator with net −0.5 whose bootstrap interval is the point (as resampling one response gives)."""
    reg = {"fixed": 0, "broken": 1, "net": -0.5, "net_ci": [-0.5, -0.5], "fixed_summed": 0, "broken_summed": 1,
           "pass_rate": 0.5, "acted_on": 1, "precision": 0.5, "false_alarm_rate": 0.5,
           "break_rate_flagged": None, "break_rate_unflagged": None, "judge_votes": 1, "failed_calls": 0,
           "parse_failures": 0, "usable_votes": 1}
    return {"task": "ifeval", "data": "ifeval", "n_items": n_responses, "rounds": rounds, "votes": 1,
            "temperature": 0.3, "initial": "shipped", "responder": "reference:echo", "judge": "api:acme/judge",
            "judge2": None, "templates": {}, "checker": "IFEval strict (loose reported beside)", "n_boot": 50,
            "judge_parse_failures": {}, "judge_errors": {}, "judge_calls": {}, "no_usable_report": [], "calls": {},
            "planned_calls": {"judge": 0, "revisions": 0}, "responder_errors": 0, "n_rewrites": 0,
            "notes": "a loop result with every key a run writes",
            "regulator_descriptions": {r: f"{r} regulator" for r in regulators},
            "before": {"pass_rate": 1.0, "loose_pass_rate": 1.0, "n_units": 2 * n_responses,
                       "n_responses": n_responses},
            "regulators": {r: reg | {"rounds": [_round(k + 1, -0.5) for k in range(rounds)]} for r in regulators},
            "differences": {f"{a} - {b}": {"net": 0.0, "ci": [0.0, 0.0]}
                            for i, a in enumerate(regulators) for b in regulators[i + 1:]},
            "precision_vs_net": {"rho": rho, "p": p, "n": n_rho, "exact": True, "regulators": list(regulators)[:n_rho]},
            "keyword_table": {"punctuation:no_comma": ["comma"]}}


def _text(sections) -> str:
    return "\n".join(s.body + " ".join(s.banners) for s in sections)


def test_a_net_on_one_response_is_not_printed_as_an_estimate_with_an_interval():
    secs = loop_sections(_result(1, ("control", "score"), float("nan"), float("nan"), 1))
    text = _text(secs)
    assert "-0.500" not in text and "−0.500" not in text and "[-0.5" not in text, text
    net = secs[0].body
    assert (f"not estimated: 1 response, and a bootstrap interval over responses needs at least "
            f"{MIN_RESPONSES_FOR_INTERVAL}") in net
    # the counts behind the net are facts and stay
    assert re.search(r"<td>control</td>\s*<td>0</td>\s*<td>1</td>", net), net
    diffs = next(s for s in secs if s.title == "Arm differences").body
    assert "0.000" not in diffs and "not estimated" in diffs


def test_a_rank_correlation_across_too_few_regulators_says_so_instead_of_nan():
    secs = loop_sections(_result(1, ("control", "score"), float("nan"), float("nan"), 1))
    text = _text(secs)
    assert "nan" not in text.lower().replace("nanoseconds", ""), text
    assert (f"Spearman ρ of report precision vs net: not computed — 1 regulator with a defined precision, "
            f"and a rank correlation needs at least {MIN_REGULATORS_FOR_RHO}") in text, text


def test_a_rank_correlation_with_a_constant_quantity_is_not_defined_and_says_so():
    secs = loop_sections(_result(12, ("control", "score", "blind", "informed"), float("nan"), float("nan"), 4))
    text = _text(secs)
    assert "nan" not in text.lower()
    assert "not defined: precision or net is the same for every regulator" in text


def test_a_rank_correlation_with_enough_regulators_prints_rho_p_and_the_smallest_attainable_p():
    secs = loop_sections(_result(12, ("control", "score", "blind", "informed"), 1.0, 1 / 24, 4))
    assert ("Spearman ρ of report precision vs net across 4 regulators: 1.000, one-sided exact permutation "
            "p = 0.042 (the smallest attainable with 4 is 0.042)") in _text(secs)


def test_enough_responses_print_the_net_with_its_interval():
    n = MIN_RESPONSES_FOR_INTERVAL
    secs = loop_sections(_result(n, ("control", "score"), float("nan"), float("nan"), 1))
    assert re.search(r"<td>control</td>\s*<td>0</td>\s*<td>1</td>\s*<td>-0.500</td>\s*<td>-0.500</td>\s*<td>-0.500</td>", secs[0].body)


def test_rounds_are_drawn_on_an_axis_of_whole_rounds():
    secs = loop_sections(_result(12, ("control", "score"), float("nan"), float("nan"), 1, rounds=1))
    body = next(s for s in secs if s.title == "Pass rate by round").body
    spec = json.loads(re.search(r"Plotly\.newPlot\(\s*\"[^\"]+\",\s*(\[.*?\]),\s*(\{.*?\}),\s*\{\"displaylogo\"",
                                body, re.S).group(2))
    assert spec["xaxis"]["dtick"] == 1 and spec["xaxis"]["tick0"] == 0, spec["xaxis"]


def test_the_constraints_behind_the_net_read_each_units_outcome_and_the_report_on_it(tmp_path):
    import pandas as pd

    from judgeaudit.report.loop import unit_frame, units_section

    pd.DataFrame({"regulator": ["score", "score", "blind"], "round": [1, 1, 1], "item_id": ["1", "2", "1"],
                  "unit": ["0:a", "0:b", "0:a"], "pass_initial": [False, True, False], "pass_start": [False, True, False],
                  "pass_end": [True, False, False], "loose_initial": False, "loose_end": False,
                  "flagged": [True, False, True], "acted": True}).to_parquet(tmp_path / "units.parquet")
    (tmp_path / "complaints.jsonl").write_text(
        json.dumps({"regulator": "blind", "round": 1, "item_id": "1", "text": "uses a comma", "correct": True}) + "\n")
    df = unit_frame(tmp_path)
    assert df["outcome"].tolist() == ["fixed", "broken", "still failing"]
    assert df["report on this response"].tolist()[2] == "uses a comma [names a failing constraint]"
    assert df["report on this response"].isna().tolist()[:2] == [True, True]
    sec = units_section(tmp_path)
    assert sec is not None and '"rows":[["score",1,"1","0:a","fixed","yes","yes",null]' in sec.body
