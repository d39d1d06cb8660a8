"""The prediction ledger: commit, tamper detection, the five verdicts, stale runs, and the counting
rule of blind-spot.txt §3.8 reproduced on a ledger shaped like Appendix A's Table 6."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from judgeaudit.errors import InputError
from judgeaudit.ledger.commit import canonical, commit, prediction_hash, verify
from judgeaudit.ledger.model import Ledger, Prediction, parse_bar
from judgeaudit.ledger.report import table6, tally
from judgeaudit.ledger.score import load_results, resolve, score
from judgeaudit.ledger.store import read_ledger, write_ledger

T0 = "2026-08-28T10:00:00+00:00"
LATER = "2026-08-29T10:00:00+00:00"
EARLIER = "2026-08-27T10:00:00+00:00"


def _result(folder: Path, data: dict, created_at: str = LATER, run_id: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / "result.json"
    p.write_text(json.dumps({**data, "run_id": run_id or f"id-{folder.name}", "created_at": created_at}))
    return p


def _pred(pid: str, *clauses: dict, **kw) -> Prediction:
    return Prediction.model_validate({"id": pid, "clauses": list(clauses), **kw})


def test_canonical_serialisation_normalises_numbers_keys_and_unicode():
    assert canonical({"b": 1.0, "a": "e\u0301", "c": [0.10, 2]}) == '{"a":"é","b":1,"c":[0.1,2]}'.encode()
    # the same prediction written with 0.10 / 0.1 and ≥ / >= parses identically and hashes the same
    a = _pred("P1", {"metric": "x.gap", "bar": "≥ 0.10"})
    b = _pred("P1", {"metric": "x.gap", "bar": "≥ 0.10", "comparator": ">=", "value": 0.1})
    assert prediction_hash(a) == prediction_hash(b)
    assert prediction_hash(a) == hashlib.sha256(
        b'{"clauses":[{"bar":"\xe2\x89\xa5 0.10","comparator":">=","metric":"x.gap","value":0.1}],"id":"P1"}'
    ).hexdigest()


def test_bars_as_written_parse():
    assert parse_bar("≥ 0.15") == (">=", 0.15)
    assert parse_bar("< −0.05") == ("<", -0.05)
    assert parse_bar("within [0.78, 0.91]") == ("between", (0.78, 0.91))
    assert parse_bar("sign negative") == ("sign", -1.0)
    with pytest.raises(InputError, match="comparator"):
        parse_bar("blind ≥ 10 pts below mid-tier")


def test_commit_tamper_refused_and_new_predictions_commit_in_a_new_entry(tmp_path):
    path = tmp_path / "ledger.yaml"
    led = Ledger(predictions=(_pred("P1", {"letter": "a", "metric": "x.gap", "bar": ">= 0.10"},
                                    {"letter": "b", "metric": "x.R", "bar": "< 0.5"}),))
    led, entry = commit(led, path=path, at=T0, git=None)
    write_ledger(path, led)
    back = read_ledger(path)
    verify(back, path)  # a round trip through the file keeps every hash
    assert entry.predictions == {"P1": prediction_hash(led.predictions[0])}
    assert len(entry.sha256) == 64 and entry.parent is None

    # a committed bar edited in the file: refused, naming the prediction
    path.write_text(path.read_text().replace(">= 0.10", ">= 0.05"))
    with pytest.raises(InputError, match=r"P1 was edited after it was committed at 2026-08-28"):
        commit(read_ledger(path), path=path)
    # the commit time moved later (to let an older run score): refused
    write_ledger(path, back)
    path.write_text(path.read_text().replace("2026-08-28T10", "2026-08-26T10"))
    with pytest.raises(InputError, match="commit record was altered"):
        verify(read_ledger(path), path)
    # a committed prediction removed: refused
    with pytest.raises(InputError, match="removed"):
        verify(back.model_copy(update={"predictions": ()}))

    # a new prediction is allowed, and commits in a second entry chained to the first
    grown = back.model_copy(update={"predictions": (*back.predictions, _pred("P2", {"metric": "x.S", "bar": ">= 0.9"}))})
    grown, second = commit(grown, at=LATER, git=None)
    assert list(second.predictions) == ["P2"] and second.parent == entry.sha256
    verify(grown)
    assert commit(grown, at=LATER)[1] is None  # nothing new


def test_the_five_verdicts_from_planted_results(tmp_path):
    # "≥ +0.10", written with its sign as Table 6 writes a gain, states an effect (a predicted sign)
    gap = lambda v, ci=None: {"judges": {"j": {"gap": v, **({"gap_ci": ci} if ci else {})}}}  # noqa: E731
    led = Ledger(predictions=(
        _pred("P1", {"metric": "judges.j.gap", "bar": ">= +0.10"}, run="met"),
        _pred("P2", {"metric": "judges.j.gap", "bar": ">= +0.10"}, run="short"),
        _pred("P3", {"metric": "judges.j.gap", "bar": ">= +0.10", "fails": {"bar": "< 0.02"}}, run="fails"),
        _pred("P4", {"metric": "judges.j.gap", "bar": ">= +0.10"}, run="reversed"),
        _pred("P5", {"metric": "judges.j.gap", "bar": ">= +0.10"}, run="absent"),
        # a FAILS written for the whole prediction applies to each lettered part
        _pred("P6", {"letter": "a", "metric": "/judges/j/gap", "bar": ">= +0.10"},
              {"letter": "b", "metric": "judges.j.gap", "bar": "between 0.05 0.3"},
              fails={"bar": "< 0.02"}, run="fails"),
    ))
    led = commit(led, at=T0, git=None)[0]
    # P7, added after the commit, is not scored
    led = led.model_copy(update={"predictions": (
        *led.predictions, _pred("P7", {"metric": "judges.j.gap", "bar": ">= +0.10"}, run="short"))})
    _result(tmp_path / "met", gap(0.15, [0.05, 0.25]))
    _result(tmp_path / "short", gap(0.05, [-0.02, 0.12]))
    _result(tmp_path / "fails", gap(0.01, [-0.03, 0.05]))
    _result(tmp_path / "reversed", gap(-0.20, [-0.30, -0.10]))
    _result(tmp_path / "absent", {"judges": {"j": {"S": 0.9}}})
    got = {s.unit: (s.verdict, s.direction) for s in score(led, load_results([tmp_path]))}
    assert got == {"P1": ("met", "as predicted"), "P2": ("not met", "null"), "P3": ("FAILS", "null"),
                   "P4": ("reversed", "opposite"), "P5": ("not run", None),
                   "P6(a)": ("FAILS", "null"),
                   # a 'between' bar states a level, not a signed effect: FAILS takes its default direction
                   "P6(b)": ("FAILS", "opposite")}
    t = tally(score(led, load_results([tmp_path])))
    assert t.n_units == 7 and t.n_predictions == 6 and t.n_ran == 6
    assert t.verdicts == {"met": 1, "not met": 1, "FAILS": 3, "reversed": 1, "not run": 1}


def test_a_run_older_than_the_commit_cannot_score(tmp_path):
    led = commit(Ledger(predictions=(_pred("P1", {"metric": "judges.j.gap", "bar": ">= 0.1"}, run="rid-old"),)),
                 at=T0, git=None)[0]
    _result(tmp_path / "v", {"judges": {"j": {"gap": 0.2}}}, created_at=EARLIER, run_id="rid-old")
    with pytest.raises(InputError, match=r"P1: run rid-old was created at 2026-08-27.*before the clause was "
                                         r"committed at 2026-08-28"):
        score(led, load_results([tmp_path]))
    # by analysis kind: a newer run scores, the older one is ignored
    led = commit(Ledger(predictions=(_pred("P1", {"metric": "judges.j.gap", "bar": ">= 0.1"}, run="v"),)),
                 at=T0, git=None)[0]
    with pytest.raises(InputError, match="every result of run v was created before"):
        score(led, load_results([tmp_path]))
    _result(tmp_path / "w" / "v", {"judges": {"j": {"gap": 0.05}}}, created_at=LATER, run_id="rid-new")
    (s,) = score(led, load_results([tmp_path]))
    assert (s.verdict, s.run_id, s.value) == ("not met", "rid-new", 0.05)


def test_a_result_without_its_run_stamp_is_refused(tmp_path):
    (tmp_path / "result.json").write_text(json.dumps({"judges": {}}))
    with pytest.raises(InputError, match="run_id"):
        load_results([tmp_path])


def test_resolve_reads_the_ci_sibling_in_each_layout():
    d = {"judges": {"api:x/gpt-4.1": {"gap": 0.1, "gap_ci": [0.0, 0.2]}},
         "sets": {"s": {"overall": {"value": 0.7, "ci": [0.6, 0.8]}}}}
    assert resolve(d, "/judges/api:x~1gpt-4.1/gap") == (0.1, (0.0, 0.2))
    assert resolve(d, "sets.s.overall") == (0.7, (0.6, 0.8))
    assert resolve(d, "sets.s.overall.value") == (0.7, (0.6, 0.8))
    assert resolve(d, "sets.s.missing") == (None, None)


def _table6_units() -> list[tuple[str, str, str]]:
    rows = (Path(__file__).parent / "table6.txt").read_text(encoding="utf-8").splitlines()
    return [tuple(r.split("\t")) for r in rows if r and not r.startswith("#")]


# Planted observations that land an effect clause "gap >= +0.10" (FAILS if "between -0.5 0.02") in each verdict
# and direction.
_PLANT = {
    ("met", "as predicted"): (0.20, [0.15, 0.25]),
    ("not met", "as predicted"): (0.05, [0.01, 0.09]),
    ("not met", "null"): (0.05, [-0.01, 0.11]),
    ("not met", "opposite"): (-0.60, None),  # no interval: not "reversed"
    ("FAILS", "as predicted"): (0.01, [0.005, 0.015]),
    ("FAILS", "null"): (0.01, [-0.02, 0.04]),
    ("FAILS", "opposite"): (-0.05, None),
    ("reversed", "opposite"): (-0.20, [-0.30, -0.10]),
}


def test_the_papers_counting_rule_on_a_ledger_shaped_like_table6(tmp_path):
    units = _table6_units()
    preds: dict[str, list[dict]] = {}
    metrics: dict[str, object] = {}
    for i, (unit, verdict, direction) in enumerate(units):
        pid, letter = re.fullmatch(r"(P\d+)(?:\((.+)\))?", unit).groups()
        preds.setdefault(pid, []).append({"letter": letter or "", "metric": f"u{i}.gap", "bar": ">= +0.10"})
        if verdict != "not run":
            v, ci = _PLANT[(verdict, direction)]
            metrics[f"u{i}"] = {"gap": v, **({"gap_ci": ci} if ci else {})}
    # the FAILS clause is written once per prediction and applies to each lettered part
    led = Ledger(predictions=tuple(_pred(pid, *cl, fails={"bar": "between -0.5 0.02"}) for pid, cl in preds.items()))
    led = commit(led, at=T0, git=None)[0]
    _result(tmp_path / "all", metrics)
    scores = score(led, load_results([tmp_path]))
    assert [(s.unit, s.verdict, s.direction or "-") for s in scores] == units
    t = tally(scores)
    assert (t.n_units, t.n_predictions, t.n_ran) == (83, 37, 81)
    assert t.verdicts == {"met": 32, "not met": 28, "FAILS": 18, "reversed": 3, "not run": 2}
    assert t.directions == {"as predicted": 50, "null": 13, "opposite": 18}
    assert ("Of the 83 units in the committed clauses of the 37 predictions, 32 were met, 28 were not met, 18 "
            "triggered their FAILS clause, 3 reversed and 2 were not run. Of the 81 units that ran, the observed "
            "direction was as predicted in 50, null in 13 and opposite in 18.") in table6(scores)
    assert "| P3 | >= +0.10 | reversed; opposite |" in table6(scores)
    assert t.per_prediction["P14"] == {"met": 0, "not met": 1, "FAILS": 2, "reversed": 0, "not run": 0}


def test_store_errors_name_file_line_and_field(tmp_path):
    p = tmp_path / "l.yaml"
    head = "predictions:\n  - id: P1\n    clauses:\n      - metric: x.gap\n"
    cases = {
        "        bar: about ten points\n": "l.yaml:4: field 'predictions[0].clauses[0].bar': bar 'about ten points' is "
                                            "not one of",
        "        bar: '>= 1'\n        colour: red\n": "l.yaml:6: field 'predictions[0].clauses[0].colour': Extra "
                                                      "inputs are not permitted",
        "        bar: '>= 1'\n        letter: a\n      - metric: y\n        bar: '< 2'\n        letter: a\n":
            "l.yaml:2: field 'predictions[0]': prediction P1: clause letters repeat",
    }
    for tail, expect in cases.items():
        p.write_text(head + tail)
        with pytest.raises(InputError) as e:
            read_ledger(p)
        assert str(e.value).startswith(str(tmp_path / expect)), str(e.value)


def test_commit_records_the_git_head_inside_a_repository_and_none_outside(tmp_path):
    import subprocess

    outside = tmp_path / "plain" / "l.yaml"
    outside.parent.mkdir()
    led = Ledger(predictions=(_pred("P1", {"metric": "x", "bar": "> 0"}),))
    assert commit(led, path=outside, at=T0)[1].git is None
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "x").write_text("x")
    subprocess.run([*git, "add", "x"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert commit(led, path=repo / "l.yaml", at=T0)[1].git == head
