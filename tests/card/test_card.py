"""The §6.1 checklist and the validity card, built from fixture run folders: every section present,
and every section absent (each then carries its "not measured — run: <command>" line)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from judgeaudit.card.checklist import checklist
from judgeaudit.card.sources import collect
from judgeaudit.cli import app
from judgeaudit.ledger.commit import commit
from judgeaudit.ledger.model import Ledger, Prediction
from judgeaudit.ledger.store import write_ledger

J = "api:acme/judge-1"
T_COMMIT, T_RUN = "2026-09-01T00:00:00+00:00", "2026-09-02T00:00:00+00:00"


def _write(folder: Path, data: dict, i: int = 0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(json.dumps({**data, "run_id": f"run-{folder.name}",
                                                    "created_at": T_RUN}))


def _validity(n_control: int = 240, direction_source: str | None = "human") -> dict:
    block = {"S": 0.93, "S_ci": [0.9, 0.96], "R": 0.31, "R_ci": [0.25, 0.37], "R_scope": 0.40,
             "R_scope_ci": [0.33, 0.47], "R_strength": 0.20, "R_strength_ci": [0.14, 0.27], "gap": 0.20,
             "gap_ci": [0.10, 0.30], "gap_perm_p": 0.002, "R_plus": 0.08, "R_plus_ci": [0.05, 0.12],
             "wrong_way_rate": 0.23, "wrong_way_rate_ci": [0.18, 0.29], "control_flip_rate": 0.07,
             "control_flip_rate_ci": [0.04, 0.10], "tau": 5.0, "interpretable": True, "n_construct": 336,
             "n_control": n_control, "R_excess": 0.24, "R_excess_ci": [0.17, 0.31], "single_point": False,
             "notes": [],
             "directional": {"scope": {"R_plus": 0.1, "R_plus_ci": [0.06, 0.15], "wrong_way_rate": 0.3,
                                       "wrong_way_rate_ci": [0.2, 0.4]},
                             "strength": {"R_plus": 0.05, "R_plus_ci": [0.02, 0.09], "wrong_way_rate": 0.15,
                                          "wrong_way_rate_ci": [0.1, 0.2]}}}
    d = {"s_floor": 0.9, "bar": 0.75, "n_base": 48, "n_probes": 576, "judges": {J: block},
         "direction_source": direction_source, "level": 0.95, "n_boot": 1000, "n_perm": 1000, "seed": 0,
         "bootstrap_unit": "base_id", "tau_in_bootstrap": "reselected", "slots": {}, "axes": {}}
    return d


def _vp(*, origin: str | None = "human preference", a_hum: bool = True, perms: int = 200,
        provenance: bool = True) -> dict:
    members = {"length_only": {"kappa": 0.45}}
    if provenance:
        members["provenance_recoverable"] = {"kappa": 0.33}
    mode = {"applicable": True, "n": 120, "a_imp": 0.45, "a_imp_ci": [0.30, 0.60], "a_imp_member": "length_only",
            "a_imp_null": {"n": perms, "p_value": 0.004 if perms else None, "clears_null": bool(perms)},
            "a_hum": 0.7 if a_hum else None, "a_hum_ci": [0.6, 0.8] if a_hum else None,
            "vp": 0.25 if a_hum else None, "resolvable": True if a_hum else None, "members": members}
    return {"config": {}, "transfer": [], "sets": {"prefs": {"meta": {"label_origin": origin} if origin else {},
                                                             "item": mode}}}


def _cap() -> dict:
    cond = lambda v: {"value": v, "ci": [v - 0.1, v + 0.1], "n": 50, "coverage": "direct"}  # noqa: E731
    return {"conditions": [], "sets": {"judgebench": {"judges": {J: {
        "overall": {"value": 0.6, "ci": [0.5, 0.7], "n": 100},
        "conditions": {"C1": cond(0.7), "C2": cond(0.35),
                       "C7": {**cond(0.5), "strict": {"value": 0.4, "ci": [0.3, 0.5]},
                              "consistency": {"value": 0.8, "ci": [0.7, 0.9]}}}}}}}}


def _all_present(root: Path) -> Path:
    _write(root / "validity", _validity())
    _write(root / "cap", _cap())
    _write(root / "vp", _vp())
    counts = {"n": 20, "n_defective": 10, "n_clean": 10, "no_verdict": 0, "answers": 20, "ties": 0,
              "parse_failures": 0, "unit": "answer", "scored": "per-answer labels"}   # every key a run writes
    _write(root / "world", {"arms": ["blind", "informed"], "tie_rule": "any", "form": "label", "n_boot": 2000,
                            "seed": 0, "spearman": [], "paired": [], "judges": {J: {"arms": {
        "blind": {**counts, "recall": 0.2, "ci": {"recall": [0.1, 0.3]}},
        "informed": {**counts, "recall": 0.6, "ci": {"recall": [0.5, 0.7]}}}}}})
    _write(root / "loop", {"judge": J, "regulators": {"blind": {"net": -0.04, "net_ci": [-0.08, 0.0]},
                                                      "informed": {"net": 0.02, "net_ci": [-0.01, 0.05]}}})
    led = Ledger(predictions=(Prediction.model_validate(
        {"id": "P1", "run": "validity", "clauses": [{"metric": f"/judges/{J.replace('/', '~1')}/gap",
                                                     "bar": ">= 0.10"}]}),))
    write_ledger(root / "ledger.yaml", commit(led, at=T_COMMIT, git=None)[0])
    return root


def test_checklist_every_item_met_with_its_evidence(tmp_path):
    _write(tmp_path / "v", _validity())
    _write(tmp_path / "p", _vp())
    items = checklist(collect([tmp_path]), J)
    assert [(i.number, i.ok, i.evidence) for i in items] == [
        (1, True, "prefs: labels 'human preference'; probes (v): directions 'human'"),
        (2, True, "prefs/item: a_imp 0.450 [0.300, 0.600] (length_only)"),
        (3, True, "prefs/item: a_hum 0.700 [0.600, 0.800], VP +0.250"),
        (4, True, "prefs/item: 200 permutations, p 0.004"),
        (5, True, f"{J}: 336 construct edits, 240 surface (control) edits"),
        (6, True, "prefs/item: provenance-recoverable κ 0.330"),
    ]


def test_checklist_each_item_fails_on_its_own_defect(tmp_path):
    _write(tmp_path / "v", _validity(n_control=0, direction_source=None))
    _write(tmp_path / "p", _vp(origin=None, a_hum=False, perms=0, provenance=False))
    items = {i.number: i for i in checklist(collect([tmp_path]), J)}
    assert [items[k].ok for k in range(1, 7)] == [False, True, False, False, False, False]
    assert items[1].evidence == "no label origin recorded for prefs; no direction source recorded for probes (v)"
    assert items[3].evidence.startswith("no human ceiling in prefs/item — run: judgeaudit vp audit")
    assert items[4].evidence == "no null for prefs/item (--permutations 0)"
    assert items[5].evidence == f"{J}: 336 construct edits, 0 surface (control) edits"
    assert items[6].evidence.startswith("no generative-condition field in prefs")


def all_present_card(tmp: Path) -> Path:
    """The card folder of ``_all_present``'s runs (every section measured) with its ledger, built under ``tmp``."""
    root = _all_present(tmp / "runs")
    out = tmp / "card"
    res = CliRunner().invoke(app, ["card", "--judge", J, "--from", str(root), "--out", str(out),
                                   "--ledger", str(root / "ledger.yaml")])
    assert res.exit_code == 0, res.output
    return out


def _card(tmp_path, root, *extra):
    out = tmp_path / "card"
    res = CliRunner().invoke(app, ["card", "--judge", J, "--from", str(root), "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    return json.loads((out / "card.json").read_text()), (out / "card.html").read_text(), \
        (out / "checklist.md").read_text()


def test_card_with_every_section_present(tmp_path):
    root = _all_present(tmp_path / "runs")
    card, html, md = _card(tmp_path, root, "--ledger", str(root / "ledger.yaml"))
    s = card["sections"]
    assert all(s[k]["measured"] for k in s), {k: v.get("not_measured") for k, v in s.items()}
    assert s["validity"]["metrics"]["R"] == {"value": 0.31, "ci": [0.25, 0.37]}
    assert s["validity"]["n"] == {"base_items": 48, "construct_edits": 336, "control_edits": 240}
    assert s["validity"]["per_axis"]["strength"]["wrong_way_rate"] == {"value": 0.15, "ci": [0.1, 0.2]}
    assert s["validity"]["source"]["run_id"] == "run-validity"
    assert s["cap"]["sets"]["judgebench"]["conditions"]["C7"]["consistency"]["value"] == 0.8
    assert s["vp"]["rows"][0]["vp"] == 0.25 and s["world"]["numbers"]["arms.informed.recall"] == 0.6
    assert s["loop"]["numbers"]["regulators.blind.net"] == -0.04
    assert s["ledger"]["verdicts"] == {"met": 1, "not met": 0, "FAILS": 0, "reversed": 0, "not run": 0}
    assert card["verdict"] == [
        f"At matched invariance (S = 0.930 [0.900, 0.960] ≥ 0.9), {J} moves on R = 0.31 [0.25, 0.37] of "
        "construct-changing edits.",
        "It is insensitive on strength at matched invariance (R_strength 0.20 [0.14, 0.27], below 0.5 with its "
        "interval, vs R_scope 0.40 [0.33, 0.47]; the gap's interval excludes zero and its axis-label permutation "
        "p = 0.002).",
        "Most of its construct flips go the wrong way (wrong-way rate 0.23 [0.18, 0.29], its interval above R⁺'s "
        "0.080 [0.050, 0.120]; both are judgeaudit's own extensions, not paper quantities).",
        "On judgebench its CAP profile is weakest on C2 (0.35 [0.25, 0.45], n = 50; below C1 with intervals; "
        "direct-coverage cells compared).",
        "In the world run no paired arm difference was recorded (no sentence on a direction); each arm's rate and "
        "interval are in its section below.",
        "In the loop, arm blind's net effect is not distinguishable from zero (net -0.040 [-0.080, +0.000] of "
        "checked units, fixed − broken).",
        "In the loop, arm informed's net effect is not distinguishable from zero (net +0.020 [-0.010, +0.050] of "
        "checked units, fixed − broken).",
        # the label sets the judge is validated against, after the judge's own findings
        "Length alone reproduces part of its validation set prefs (item) (a_imp 0.45 [0.30, 0.60], above its "
        "permutation null (Benjamini–Hochberg-adjusted p = 0.004) and its interval above 0; §5.4 reads a_imp up "
        "to 0.3 as headroom).",
        "§6.1 checklist: 6 of 6 items met.",
    ]
    for title in ("Validity profile", "CAP profile", "Validation power of the ruler", "World gap", "Loop safety",
                  "§6.1 checklist", "Prediction ledger"):
        assert title in html
    assert "not measured" not in html and md.count("✓") == 6


def test_card_with_every_section_absent(tmp_path):
    (tmp_path / "empty").mkdir()
    card, html, md = _card(tmp_path, tmp_path / "empty")
    s = card["sections"]
    from html import unescape

    from judgeaudit.commands.default_runs import DEFAULT_RUNS

    alt = f" (or: judgeaudit card --judge {J} --run-missing --out DIR)"
    from judgeaudit.card.defaults import DATA
    from judgeaudit.card.share import DATA_NOTE

    # the bundled data's folder named DATA (a card is shared: no path of the machine that made it)
    note = lambda c: f"{c.replace(str(DATA), 'DATA')}{alt} ({DATA_NOTE})" if str(DATA) in c else c + alt  # noqa: E731
    expect = {k: f"not measured — run: {note(r.command.format(judge=J))}" for k, r in DEFAULT_RUNS.items()}
    assert expect["cap"].startswith("not measured — run: judgeaudit cap run --set 'judgebench:DATA/judgebench_fixture?name=judgebench_fixture' --set "
                                    "'llmbar:DATA/llmbar' ")
    assert expect["validity"] == f"not measured — run: judgeaudit validity run --judge {J} --probes bundled --out DIR{alt}"
    expect["ledger"] = f"not measured — run: judgeaudit card --judge {J} --from DIR --ledger FILE --out DIR"
    assert {k: s[k].get("not_measured") for k in expect} == expect
    for line in expect.values():
        assert line in unescape(html)
    assert [i["ok"] for i in s["checklist"]["items"]] == [False] * 6 and md.count("✗") == 6
    assert card["lead"]["judge"] == [[k, ["Not measured."]] for k in ("validity", "cap", "world", "loop")]
    assert card["verdict"] == ["§6.1 checklist: 0 of 6 items met.",
                               "Not measured: validity, cap, vp, world, loop, ledger."]
