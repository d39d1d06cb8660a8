"""The items behind the CAP and validation-power numbers (their units tables) and their summary lines.

CAP: a run with planted verdicts (right in both orders, wrong in both, right in one, a parse failure) shows
each item with the outcome the cell counted and what the judge said, read from the run's recorded tables
(``units.parquet`` and ``pair_verdicts.parquet``). Validation power: each row's out-of-fold predictions are the
ones a_imp is computed on (κ recomputed from the table equals the result's), and a set the family cannot run
on gets a summary line that says why instead of a number. Every units table is made by one helper."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from judgeaudit.analyses.cap import cap_profile, pair_verdicts
from judgeaudit.datasets._common import UNAVAILABLE, CoverageCell

COND = {c: UNAVAILABLE for c in ("C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8")}
COND |= {"C7": CoverageCell("direct", "A/B and B/A; BC")}


def _pairs(n: int, set_name: str = "s") -> pd.DataFrame:
    return pd.DataFrame({"pair_id": [f"p{i}" for i in range(n)], "prompt": "q", "response_a": "a",
                         "response_b": "b", "label": ["A", "B"] * (n // 2), "group": None, "source_set": set_name,
                         "subset": None, "condition_a": None, "condition_b": None, "meta": [{}] * n})


def _planted() -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """p0 right in both orders, p1 wrong in both, p2 right in A/B only, p3 a parse failure in B/A; 16 more
    right in both (so every cell has an interval)."""
    pairs = _pairs(20)
    label = pairs["label"].tolist()
    wrong = {"A": "B", "B": "A"}
    ab = list(label)
    ba = list(label)
    ab[1], ba[1] = wrong[label[1]], wrong[label[1]]
    ba[2] = wrong[label[2]]
    ba[3] = None
    fail_ba = [None] * 20
    fail_ba[3] = "parse"
    t = pd.DataFrame({"pair_id": pairs["pair_id"], "judge_id": "j", "family": "f", "choice_ab": ab,
                      "choice_ba": ba, "rationale_ab": [f"reply ab {i}" for i in range(20)],
                      "rationale_ba": [f"reply ba {i}" for i in range(20)], "failure_ab": None, "failure_ba": fail_ba})
    return pairs, {"j": t}


def test_cap_units_show_each_item_as_the_cell_counted_it_with_the_judges_verdicts(tmp_path):
    from judgeaudit.commands.cap import write_outputs
    from judgeaudit.report.cap import unit_frame

    pairs, tables = _planted()
    result = cap_profile(pairs, tables, {"s": COND}, n_boot=50, seed=0)
    write_outputs(result, tmp_path / "run", verdicts=pair_verdicts(pairs, tables))
    units = pd.read_parquet(tmp_path / "run" / "units.parquet")
    verdicts = pd.read_parquet(tmp_path / "run" / "pair_verdicts.parquet")
    df = unit_frame(units, verdicts)
    overall = df[df["condition"] == "overall (position-averaged)"].set_index("item")
    strict = df[df["condition"].str.startswith("C7")].set_index("item")
    assert overall.loc["p0", "outcome"] == "right" and overall.loc["p0", "share right"] == 1.0
    assert overall.loc["p1", "outcome"] == "wrong" and overall.loc["p1", "verdict A/B"] == "A"
    assert overall.loc["p2", "outcome"] == "partly right" and overall.loc["p2", "share right"] == 0.5
    assert strict.loc["p2", "outcome"] == "wrong"      # C7 counts both orders right, and B/A was wrong
    assert overall.loc["p3", "outcome"] == "excluded: parse failure (B/A)"
    assert overall.loc["p3", "verdict B/A (original frame)"] == "parse failure"
    assert "p3" not in strict.index                    # excluded from every cell (failures="exclude")
    assert overall.loc["p2", "reply B/A"] == "reply ba 2" and overall.loc["p2", "correct side"] == "A"
    # one row per counted unit of every cell, plus the excluded pair
    assert len(df) == int((units["metric"] == "value").sum()) + 1
    # the counts of the outcomes are the cell's: 17 right in both orders, 1 in one of two, 1 wrong, over 19
    assert result.value("s", "j", "overall") == pytest.approx((17 + 0.5) / 19)
    html = (tmp_path / "run" / "report.html").read_text()
    assert "The items behind the numbers" in html and html.count('class="units"') == 1


def test_cap_summary_lines_read_the_interval_against_chance_and_a_single_point_interval_is_not_a_result():
    from judgeaudit.report.cap import headlines

    pairs, tables = _planted()
    rng = np.random.default_rng(3)
    noisy = tables["j"].assign(choice_ab=rng.choice(["A", "B"], 20), choice_ba=rng.choice(["A", "B"], 20),
                               failure_ba=None)
    perfect = tables["j"].assign(choice_ab=pairs["label"], choice_ba=pairs["label"], failure_ba=None)
    result = cap_profile(pairs, {"j": tables["j"], "noisy": noisy, "perfect": perfect}, {"s": COND},
                         n_boot=200, seed=0)
    lines = {h.subject: h for h in headlines(result, "s")}
    cell = result.cells.set_index(["judge_id", "condition", "metric"])
    for judge in ("j", "noisy"):
        r = cell.loc[(judge, "overall", "value")]
        assert lines[judge].value == f"{100 * r.value:.1f}% [{100 * r.ci_lo:.1f}, {100 * r.ci_hi:.1f}], n = {r.n}"
        if r.ci_lo > 0.5:
            assert lines[judge].reading.startswith("the interval is above 50%")
        elif r.ci_hi < 0.5:
            assert lines[judge].reading.startswith("the interval is below 50%")
        else:
            assert lines[judge].reading.startswith("the interval includes 50%")
    # 20 of 20 right: the bootstrap interval is one point, so the line gives the Wilson interval of 20 of 20
    assert cell.loc[("perfect", "overall", "value")].ci_lo == 1.0
    assert lines["perfect"].value == "100.0% [83.9, 100.0] (Wilson, 20 of 20 items right: the bootstrap " \
                                     "interval is a single point here), n = 20"


def test_cap_summary_line_of_a_judge_with_no_measured_item_says_so():
    from judgeaudit.report.cap import headlines

    pairs, tables = _planted()
    failed = tables["j"].assign(choice_ab=None, choice_ba=None, failure_ab="api", failure_ba="api")
    result = cap_profile(pairs, {"j": tables["j"], "down": failed}, {"s": COND}, n_boot=50, seed=0)
    line = next(h for h in headlines(result, "s") if h.subject == "down")
    assert line.value == "—" and line.reading.startswith("no item measured")


def _vp_sets(n: int = 60) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        pref = "AB"[int(rng.integers(0, 2))]
        long, short = "word " * int(rng.integers(20, 40)), "word " * int(rng.integers(2, 10))
        rows.append({"pair_id": str(i), "prompt": f"q{i}", "response_a": long if pref == "A" else short,
                     "response_b": short if pref == "A" else long, "label": pref, "group": f"q{i}"})
    one_label = pd.DataFrame({"text": [f"t {i}" for i in range(10)], "label": "good", "item_id": range(10)})
    return {"longer wins": pd.DataFrame(rows), "one label": one_label}


def test_vp_units_are_the_out_of_fold_predictions_a_imp_is_computed_on():
    from judgeaudit.analyses.validation_power import audit_validation_power
    from judgeaudit.analyses.validation_power.scoring import pooled_kappa
    from judgeaudit.report.validation_power import unit_frame, vp_sections

    res = audit_validation_power({"longer wins": _vp_sets()["longer wins"]}, modes=("paired",),
                                 n_permutations=5, n_boot=50, transfer=False)
    r = res.get("longer wins", "paired")
    df = unit_frame(res)
    assert len(df) == r.n == 60
    assert pooled_kappa(df["label"], df["its prediction"]) == pytest.approx(r.a_imp)
    assert (df["best member"] == r.a_imp_member).all() and r.a_imp_member == "length_only"
    assert ((df["best member recovers the label"] == "yes") == (df["label"] == df["its prediction"])).all()
    for m in r.members:
        preds = [dict(x.split(": ") for x in s.split("; "))[m.name] for s in df["every member's prediction"]]
        assert pooled_kappa(df["label"], preds) == pytest.approx(m.kappa)
        said = df["members recovering it"].str.split(", ").map(lambda xs, m=m.name: m in xs)
        assert (said == (pd.Series(preds) == df["label"])).all()
    assert vp_sections(res)[-1].title == "The rows behind the numbers"


def test_vp_summary_lines_give_a_imp_with_its_interval_and_say_why_a_set_has_none():
    from judgeaudit.analyses.validation_power import audit_validation_power
    from judgeaudit.report.validation_power import headlines

    res = audit_validation_power(_vp_sets(), modes=("item",), n_permutations=19, n_boot=50, transfer=False)
    lines = {h.subject: h for h in headlines(res)}
    r = res.get("longer wins", "item")
    lo, hi = r.a_imp_ci
    assert lines["longer wins (item)"].value == f"κ {r.a_imp:.3f} [{lo:.3f}, {hi:.3f}] ({r.a_imp_member}, n = {r.n})"
    assert lines["longer wins (item)"].reading.startswith(
        "above its label-permutation null" if r.a_imp_clears_null else "not above its label-permutation null")
    assert r.a_imp_clears_null        # the planted length signal
    assert lines["one label (item)"].value == "—"
    assert lines["one label (item)"].reading == "not estimated: only one label value (('good',))"


def test_vp_audit_writes_its_predictions_and_the_report_shows_them(tmp_path):
    from typer.testing import CliRunner

    from judgeaudit.cli import app

    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in _vp_sets()["longer wins"].to_dict("records")))
    spec = f"jsonl:{p}?prompt=prompt&response_a=response_a&response_b=response_b&label=label"
    res = CliRunner().invoke(app, ["vp", "audit", "--set", spec, "--permutations", "5", "--no-transfer",
                                   "--mode", "paired", "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    preds = pd.read_parquet(tmp_path / "out" / "predictions.parquet")
    assert len(preds) == 60 and {"label set", "mode", "group", "label", "length_only"} <= set(preds.columns)
    html = (tmp_path / "out" / "report.html").read_text()
    data = json.loads(re.search(r'<script type="application/json">(.*?)</script>', html, re.S).group(1))
    assert len(data["rows"]) == 60


def test_every_units_table_is_made_by_one_helper():
    """validity, world, loop, CAP and validation power build their units section with
    ``report.html.units_section``; none calls ``units_html`` itself."""
    import inspect

    import judgeaudit.report.cap as cap
    import judgeaudit.report.loop as loop
    import judgeaudit.report.validation_power as vp
    import judgeaudit.report.validity as validity
    import judgeaudit.report.world as world

    for mod in (validity, world, loop, cap, vp):
        src = inspect.getsource(mod)
        assert "units_html" not in src, mod.__name__
        assert re.search(r"units_section(_of)?\(\s*\"The \w+ behind the numbers\"", src), mod.__name__


def test_a_units_table_holds_each_kind_of_value_as_it_is_shown():
    """The rows in the page's JSON: a missing value (None, NaN, pd.NA) is null, a boolean yes/no, a float rounded
    to 3 places, an integer an integer (numpy's too), and a text longer than ``max_chars`` cut and marked "…"."""
    from judgeaudit.report.html import units_html

    df = pd.DataFrame({"text": ["short", "x" * 12, None, "y" * 10],
                       "number": [0.123456, np.float32(2.5), np.nan, 7.0],
                       "count": pd.array([1, 2, None, 4], dtype="Int64"),
                       "flag": [True, np.bool_(False), None, True],
                       "other": [np.int64(3), pd.NA, 1.5, "text"]}, dtype=object)
    df["count"] = pd.array([1, 2, None, 4], dtype="Int64")
    html = units_html(df, caption="c", max_chars=10)
    data = json.loads(re.search(r'<script type="application/json">(.*)</script>', html).group(1))
    assert data["columns"] == ["text", "number", "count", "flag", "other"]
    assert data["rows"] == [["short", 0.123, 1, "yes", 3],
                            ["x" * 10 + "…", 2.5, 2, "no", None],
                            [None, None, None, None, 1.5],
                            ["y" * 10, 7.0, 4, "yes", "text"]]


def test_cap_profile_cell_with_a_single_point_interval_gives_wilson_and_says_why():
    from judgeaudit.report.cap import SINGLE_POINT_NOTE, cap_sections, profile_table

    pairs, tables = _planted()
    perfect = tables["j"].assign(choice_ab=pairs["label"], choice_ba=pairs["label"], failure_ba=None)
    result = cap_profile(pairs, {"j": tables["j"], "perfect": perfect}, {"s": COND}, n_boot=100, seed=0)
    prof = profile_table(result, "s").set_index("judge")
    assert prof.loc["perfect", "overall"] == "100.0 (84,100)†"     # Wilson 20 of 20: [0.839, 1]
    assert prof.loc["perfect", "C7"] == "100.0 (84,100)†"
    assert not prof.loc["j", "overall"].endswith("†")
    assert SINGLE_POINT_NOTE in cap_sections(result)[0].body.replace("&#x27;", "'")
