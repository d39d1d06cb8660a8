"""The typed world result: a ``result.json`` written before the schema was versioned reads through ``WorldFile``
with every key kept; each rate and paired gain is read with its interval and its unit (the source items
resampled, which answers they hold and how many); the run writes a superset of those keys (``schema_version``,
each judge's ``identity``), and a key renamed in a file is an error at the reader, not an empty value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeaudit.analyses.world.schema import RATES, SCHEMA_VERSION, WorldFile
from judgeaudit.errors import InputError

SCHEMA0 = Path(__file__).parent / "data" / "world_result_schema0.json"
JUDGES = ("reference:oracle", "reference:flag-none", "reference:flag-all")
ARMS = ("blind", "informed", "placebo")


def _paths(x, p=""):
    """Every key path of a JSON object (lists' items left out)."""
    out = set()
    if isinstance(x, dict):
        for k, v in x.items():
            out |= {f"{p}/{k}"} | _paths(v, f"{p}/{k}")
    return out


def test_a_schema_0_file_reads_with_every_value_and_key_kept():
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    f = WorldFile.read(SCHEMA0)
    assert f.schema_version == 0 and set(f.judges) == set(JUDGES) and f.arms == list(ARMS)
    assert f.to_json() == raw
    for j in JUDGES:
        for arm in ARMS:
            a = raw["judges"][j]["arms"][arm]
            for name in RATES:
                e = f.estimate(j, arm, name)
                assert e.value == a[name] and list(e.ci or []) == list(a["ci"][name] or [])
                assert (e.unit.resampled, e.unit.n, e.unit.resamples, e.unit.level) == (
                    "group", a["bootstrap"]["n"][name], 50, 0.95)
            rec, spec = f.estimate(j, arm, "recall").unit, f.estimate(j, arm, "specificity").unit
            assert (rec.answers, rec.n_answers) == ("defective", 8) and (spec.answers, spec.n_answers) == ("clean", 8)
    assert f.identity("reference:oracle").template == raw["judges"]["reference:oracle"]["template"]


def test_a_paired_gain_carries_its_interval_unit_and_mcnemar_p():
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    f = WorldFile.read(SCHEMA0)
    row = next(p for p in raw["paired"] if (p["judge"], p["b"], p["metric"]) == ("reference:oracle", "informed",
                                                                                   "recall"))
    g = f.gain("reference:oracle", "blind", "informed", "recall")
    assert (g.value, list(g.ci), g.mcnemar.p, g.n_pairs) == (row["gain"], row["ci"], row["mcnemar"]["p"], row["n"])
    assert (g.value, g.mcnemar.b, g.mcnemar.c) == (1.0, 8, 0)          # the oracle finds every defect once informed
    assert (g.unit.resampled, g.unit.n, g.unit.answers, g.unit.n_answers) == ("group", 8, "defective", 8)
    assert len(f.gains("reference:oracle")) == len([p for p in raw["paired"] if p["judge"] == "reference:oracle"])
    with pytest.raises(KeyError):
        f.gain("reference:oracle", "blind", "informed", "recall_rate")
    with pytest.raises(KeyError):
        f.estimate("reference:oracle", "blind", "recall_rate")


@pytest.mark.parametrize(("where", "old", "new", "field"), [
    (("judges", "reference:oracle", "arms", "informed"), "recall", "recall_rate", None),
    (("judges", "reference:oracle", "arms", "informed"), "n_defective", "defective",
     "judges.reference:oracle.arms.informed.n_defective"),
    ((), "paired", "pairs", "paired"),
])
def test_a_renamed_key_is_an_error_naming_it_not_an_empty_value(tmp_path, where, old, new, field):
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    block = raw
    for k in where:
        block = block[k]
    block[new] = block.pop(old)
    p = tmp_path / "result.json"
    p.write_text(json.dumps(raw), encoding="utf-8")
    if field is None:   # a rate is optional (None where unmeasured): reading it by name says it is absent
        f = WorldFile.read(p)
        assert f.estimate("reference:oracle", "informed", "recall").value is None
        assert f.arm("reference:oracle", "informed").model_extra["recall_rate"] == 1.0
        return
    with pytest.raises(InputError) as e:
        WorldFile.read(p)
    assert e.value.field == field and str(p) in str(e.value)


def test_the_run_writes_a_superset_of_the_schema_0_keys_with_the_judges_identity(tmp_path):
    import shutil

    from typer.testing import CliRunner

    import judgeaudit
    from judgeaudit.cli import app

    data = tmp_path / "halueval"
    shutil.copytree(Path(judgeaudit.__file__).parent / "data" / "halueval", data)
    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["world", "run", "--set", f"halueval:{data}?part=qa&max_rows=16",
                                 *[a for j in JUDGES for a in ("--judge", j)],
                                 *[a for arm in ARMS for a in ("--arm", arm)], "--votes", "1", "--bootstrap", "50",
                                 "--permutations", "99", "--out", str(out)])
    assert r.exit_code == 0, r.output
    new = json.loads((out / "result.json").read_text(encoding="utf-8"))
    old = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    assert _paths(old) - _paths(new) == set()
    assert new["schema_version"] == SCHEMA_VERSION
    f = WorldFile.read(out)
    ident = f.identity("reference:oracle")
    assert (ident.model, ident.scale) == ("oracle", {"form": "label"})
    assert new["judges"] == old["judges"] and set(new["identities"]) == set(JUDGES)
    assert new["paired"] == old["paired"] and new["spearman"] == old["spearman"]
