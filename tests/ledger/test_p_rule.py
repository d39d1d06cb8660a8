"""The direction of a unit from the run's p-value or interval: a one-sided test of zero in the
predicted direction at α (``judgeaudit.ledger.score``)."""

from __future__ import annotations

import json

import pytest

from judgeaudit.errors import InputError
from judgeaudit.ledger.commit import commit
from judgeaudit.ledger.model import Ledger, Prediction
from judgeaudit.ledger.report import score_lines
from judgeaudit.ledger.score import load_results, score


def _score(tmp_path, clause, metrics, **kw):
    led = commit(Ledger(predictions=(Prediction.model_validate({"id": "P1", "clauses": [clause]}),)),
                 at="2026-08-28T10:00:00+00:00", git=None)[0]
    (tmp_path / "r").mkdir(exist_ok=True)
    (tmp_path / "r" / "result.json").write_text(json.dumps(
        {"m": metrics, "run_id": "r", "created_at": "2026-08-29T10:00:00+00:00"}))
    return score(led, load_results([tmp_path]), **kw)[0]


@pytest.mark.parametrize(("value", "p", "alternative", "direction"), [
    (0.09, 0.19, "greater", "null"),
    (0.09, 0.01, "greater", "as predicted"),
    (-0.10, 0.97, "greater", "opposite"),     # 1 − p = 0.03 < α
    (0.09, 0.06, "two-sided", "as predicted"),  # one-sided 0.03
    (-0.09, 0.06, "two-sided", "opposite"),
    (0.09, 0.12, "two-sided", "null"),
    (0.09, 0.02, "less", "opposite"),          # a test of ρ < 0 with p 0.02: the other way
])
def test_the_p_sibling_sets_the_direction(tmp_path, value, p, alternative, direction):
    s = _score(tmp_path, {"metric": "m.rho", "bar": ">= 0.15"},
               {"rho": value, "rho_p": p, "rho_p_alternative": alternative})
    assert s.direction == direction
    assert s.p == p and s.p_alternative == alternative


def test_a_p_without_its_sidedness_is_two_sided_and_alpha_is_a_setting(tmp_path):
    s = _score(tmp_path, {"metric": "m.rho", "bar": ">= 0.15"}, {"rho": 0.09, "rho_p": 0.08})
    assert (s.direction, s.p_alternative) == ("as predicted", "two-sided")     # one-sided 0.04 < 0.05
    s = _score(tmp_path, {"metric": "m.rho", "bar": ">= 0.15"}, {"rho": 0.09, "rho_p": 0.08}, alpha=0.01)
    assert s.direction == "null"
    assert "p = 0.08 (two-sided; one-sided 0.04 in the predicted direction)" in score_lines([s])[0]


def test_a_clause_may_name_its_p_and_its_sidedness(tmp_path):
    # a validity run writes gap_perm_p, not gap_p: the clause names it
    clause = {"metric": "m.gap", "bar": ">= +0.10", "p": "m.gap_perm_p", "p_alternative": "greater"}
    assert _score(tmp_path, clause, {"gap": 0.05, "gap_perm_p": 0.30}).direction == "null"
    assert _score(tmp_path, clause, {"gap": 0.05, "gap_perm_p": 0.001}).direction == "as predicted"
    # the object form: value, ci, p beside each other
    s = _score(tmp_path, {"metric": "m.gap", "bar": ">= +0.10"},
               {"gap": {"value": 0.05, "ci": [-0.01, 0.11], "p": 0.4, "p_alternative": "greater"}})
    assert s.direction == "null"


def test_a_p_reads_a_level_bar_as_an_effect_in_the_direction_it_points(tmp_path):
    # "ρ ≤ 0.7" with a p: a p tests zero, so the clause predicts a negative effect
    assert _score(tmp_path, {"metric": "m.rho", "bar": "<= -0.15"},
                  {"rho": 0.06, "rho_p": 0.25, "rho_p_alternative": "greater"}).direction == "null"
    assert _score(tmp_path, {"metric": "m.rho", "bar": "<= 0.7"},
                  {"rho": -0.3, "rho_p": 0.001, "rho_p_alternative": "less"}).direction == "as predicted"
    # sign "none" keeps a level a level: the verdict's default
    assert _score(tmp_path, {"metric": "m.rho", "bar": ">= 0.15", "sign": "none"},
                  {"rho": 0.09, "rho_p": 0.9, "rho_p_alternative": "greater"}).direction == "as predicted"


@pytest.mark.parametrize(("ci", "direction"), [
    ((-0.002, 0.042), "as predicted"),   # one-sided p 0.037 (normal approximation to the 95% interval)
    ((-0.010, 0.050), "null"),           # 0.10
    ((0.005, 0.035), "as predicted"),
])
def test_an_interval_gives_the_one_sided_p_it_implies(tmp_path, ci, direction):
    s = _score(tmp_path, {"metric": "m.d", "bar": ">= +0.03"}, {"d": 0.020, "d_ci": list(ci)})
    assert s.direction == direction


@pytest.mark.parametrize(("metrics", "field"), [
    ({"rho": 0.1, "rho_p": 1.5}, "rho_p"),
    ({"rho": 0.1, "rho_p": "small"}, "rho_p"),
    ({"rho": 0.1, "rho_p": 0.2, "rho_p_alternative": "upper"}, "rho_p_alternative"),
])
def test_a_bad_p_names_its_field(tmp_path, metrics, field):
    with pytest.raises(InputError) as e:
        _score(tmp_path, {"metric": "m.rho", "bar": ">= 0.15"}, metrics)
    assert field in str(e.value)


def test_a_named_p_absent_from_the_result_is_refused(tmp_path):
    with pytest.raises(InputError, match="m.gap_perm_p"):
        _score(tmp_path, {"metric": "m.gap", "bar": ">= +0.10", "p": "m.gap_perm_p"}, {"gap": 0.05})
