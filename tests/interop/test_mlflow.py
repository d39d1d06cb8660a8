"""``--mlflow URI``: a run's result.json numbers (intervals as .lo/.hi) and report files logged to an MLflow run,
on a local ``file:`` store under tmp_path (no server).

Needs the ``mlflow`` extra (``pip install -e '.[mlflow]'``): without it these tests fail when ``CI=true`` and
skip otherwise (the flattening rules are tested either way).
"""

from __future__ import annotations

import importlib.util
import json
import os

import pytest
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.interop.mlflow import flatten_metrics, params_of

MISSING = "the MLflow tests need mlflow (pip install -e '.[mlflow]')"


def _require_mlflow() -> None:
    if importlib.util.find_spec("mlflow") is None:
        if os.environ.get("CI") == "true":
            pytest.fail(MISSING)
        pytest.skip(MISSING)


def test_numbers_and_intervals_are_flattened_by_path():
    doc = {"judges": {"j/1": {"S": 0.9, "S_ci": [0.85, 0.95], "n": 12, "ok": True, "note": "text",
                              "per_item": [0.1, 0.2, 0.3], "R": float("nan"), "gap_ci": [None, 0.2]}},
           "seed": 0}
    assert flatten_metrics(doc) == {"judges.j/1.S": 0.9, "judges.j/1.S_ci.lo": 0.85, "judges.j/1.S_ci.hi": 0.95,
                                    "judges.j/1.n": 12.0, "judges.j/1.gap_ci.hi": 0.2, "seed": 0.0}
    assert flatten_metrics({"a b(c)": 1}) == {"a b_c_": 1.0}
    assert params_of({"probe_set": "bundled", "seed": 3, "ok": True, "x": 0.5}) == {"probe_set": "bundled",
                                                                                    "seed": "3"}


def test_validity_run_logs_its_numbers_and_reports(tmp_path):
    _require_mlflow()
    import mlflow

    uri = f"file:{tmp_path / 'mlruns'}"
    out = tmp_path / "o"
    r = CliRunner().invoke(app, ["validity", "run", "--judge", "reference:length", "--judge", "reference:constant",
                                 "--bootstrap", "50", "--regrade", "0", "--out", str(out), "--mlflow", uri,
                                 "--mlflow-experiment", "audit"])
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "result.json").read_text())
    client = mlflow.MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("audit")
    runs = client.search_runs([exp.experiment_id])
    assert len(runs) == 1
    run = runs[0]
    assert run.info.status == "FINISHED" and run.data.tags["judgeaudit.command"] == "validity run"
    expected = flatten_metrics(doc)
    assert run.data.metrics == pytest.approx(expected)
    for jid, v in doc["judges"].items():                       # the headline numbers, as result.json has them
        for key in ("S", "R"):
            if isinstance(v.get(key), float):
                assert run.data.metrics[f"judges.{jid}.{key}"] == v[key]
    assert run.data.params["probe_set"] == "bundled"
    logged = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"result.json", "report.html", "verdicts.parquet"} <= logged


def test_mlflow_missing_is_one_error_before_anything_runs(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_mlflow(name, *a, **k):
        if name == "mlflow" or name.startswith("mlflow."):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    r = CliRunner().invoke(app, ["validity", "run", "--judge", "reference:constant", "--out", str(tmp_path / "o"),
                                 "--mlflow", f"file:{tmp_path / 'm'}"])
    assert isinstance(r.exception, InputError) and r.exception.field == "--mlflow"
    assert not (tmp_path / "o").exists()
