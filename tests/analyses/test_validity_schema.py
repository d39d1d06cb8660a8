"""The typed validity result: a ``result.json`` written before the schema was versioned reads through
``ValidityFile`` with every key kept; the run writes a superset of those keys (``schema_version``, each judge's
``identity``), and a key renamed in a file is an error at the reader, not an empty value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeaudit.analyses.validity.schema import ESTIMATES, SCHEMA_VERSION, Estimate, ValidityFile
from judgeaudit.errors import InputError

SCHEMA0 = Path(__file__).parent / "data" / "validity_result_schema0.json"
JUDGES = ("reference:length", "reference:random", "reference:constant")


def _paths(x, p=""):
    """Every key path of a JSON object (lists' items left out)."""
    out = set()
    if isinstance(x, dict):
        for k, v in x.items():
            out |= {f"{p}/{k}"} | _paths(v, f"{p}/{k}")
    return out


def test_a_schema_0_file_reads_with_every_value_and_key_kept():
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    f = ValidityFile.read(SCHEMA0)
    assert f.schema_version == 0 and set(f.judges) == set(JUDGES)
    assert f.to_json() == raw
    for j in JUDGES:
        for name in ESTIMATES:
            e = f.estimate(j, name)
            assert e.value == raw["judges"][j][name] and list(e.ci or []) == list(raw["judges"][j][f"{name}_ci"] or [])
            assert (e.unit.resampled, e.unit.n, e.unit.resamples, e.unit.level) == ("base_id", 48, 50, 0.95)
    ident = f.identity("reference:length")
    assert ident.scale == raw["judges"]["reference:length"]["scale"] and ident.model is None


def test_a_renamed_key_is_an_error_naming_it_not_an_empty_value(tmp_path):
    raw = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    raw["judges"]["reference:length"]["R_sens"] = raw["judges"]["reference:length"].pop("R")
    p = tmp_path / "result.json"
    p.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(InputError) as e:
        ValidityFile.read(p)
    assert e.value.field == "judges.reference:length.R" and str(p) in str(e.value)


def test_an_estimate_is_one_of_the_named_quantities():
    f = ValidityFile.read(SCHEMA0)
    with pytest.raises(KeyError):
        f.estimate("reference:length", "R_sens")
    assert isinstance(f.directional("reference:length", "scope", "R_plus"), Estimate)


def test_the_run_writes_a_superset_of_the_schema_0_keys_with_the_judges_identity(tmp_path):
    from typer.testing import CliRunner

    from judgeaudit.cli import app

    out = tmp_path / "run"
    r = CliRunner().invoke(app, ["validity", "run", "--probes", "bundled", *[a for j in JUDGES for a in ("--judge", j)],
                                 "--bootstrap", "50", "--regrade", "8", "--out", str(out)])
    assert r.exit_code == 0, r.output
    new = json.loads((out / "result.json").read_text(encoding="utf-8"))
    old = json.loads(SCHEMA0.read_text(encoding="utf-8"))
    assert _paths(old) - _paths(new) == set()
    assert new["schema_version"] == SCHEMA_VERSION
    f = ValidityFile.read(out)
    ident = f.identity("reference:length")
    assert ident.model == "length" and ident.scale == new["judges"]["reference:length"]["scale"]
    assert f.estimate("reference:length", "R").value == old["judges"]["reference:length"]["R"]
