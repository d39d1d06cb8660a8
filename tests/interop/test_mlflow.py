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


def _logged_run(uri: str, out, probe_set: str = "bundled"):
    import mlflow

    doc = json.loads((out / "result.json").read_text())
    client = mlflow.MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("audit")
    runs = client.search_runs([exp.experiment_id])
    assert len(runs) == 1
    run = runs[0]
    assert run.info.status == "FINISHED" and run.data.tags["judgeaudit.command"] == "validity run"
    assert run.data.metrics == pytest.approx(flatten_metrics(doc))
    for jid, v in doc["judges"].items():                       # the headline numbers, as result.json has them
        for key in ("S", "R", "gap", "tau"):
            if isinstance(v.get(key), float):
                assert run.data.metrics[f"judges.{jid}.{key}"] == v[key]
    assert run.data.params["probe_set"] == probe_set
    logged = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"result.json", "report.html", "verdicts.parquet"} <= logged
    return run


def _validity(out, uri):
    return CliRunner().invoke(app, ["validity", "run", "--judge", "reference:length", "--judge", "reference:constant",
                                    "--bootstrap", "50", "--regrade", "0", "--out", str(out), "--mlflow", uri,
                                    "--mlflow-experiment", "audit"])


def test_validity_run_logs_its_numbers_and_reports_to_a_file_store(tmp_path, monkeypatch):
    _require_mlflow()
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")     # MLflow 3 keeps file: stores behind this opt-in
    uri = f"file:{tmp_path / 'mlruns'}"
    r = _validity(tmp_path / "o", uri)
    assert r.exit_code == 0, r.output
    run = _logged_run(uri, tmp_path / "o")
    assert any(k.endswith("_ci.lo") or k.endswith(".lo") for k in run.data.metrics)   # intervals as .lo/.hi


@pytest.mark.slow
def test_validity_run_logs_to_an_sqlite_store_with_artifacts_beside_it(tmp_path, monkeypatch):
    _require_mlflow()
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    r = _validity(tmp_path / "o", uri)
    assert r.exit_code == 0, r.output
    _logged_run(uri, tmp_path / "o")
    assert (tmp_path / "mlartifacts").is_dir() and not (tmp_path / "mlruns").exists()


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


def _experiment(tmp_path, mlflow_keys: str):
    """A validity experiment on the bundled probes of the first 4 base items (48 edits)."""
    from judgeaudit.probes.io import bundled_probes_path

    lines = bundled_probes_path().read_text(encoding="utf-8").splitlines()[:48]
    (tmp_path / "probes.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = tmp_path / "exp.yaml"
    path.write_text("analysis: validity\nout: o\nprobes: probes.jsonl\njudges: [reference:length, reference:constant]\n"
                    "bootstrap: 50\nregrade: 0\n" + mlflow_keys)
    return path


def test_an_experiment_file_with_mlflow_logs_its_run(tmp_path, monkeypatch):
    _require_mlflow()
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = f"file:{tmp_path / 'mlruns'}"
    r = CliRunner().invoke(app, ["run", str(_experiment(tmp_path, f"mlflow: {uri}\nmlflow_experiment: audit\n"))])
    assert r.exit_code == 0, r.output
    _logged_run(uri, tmp_path / "o", str(tmp_path / "probes.jsonl"))


def test_run_mlflow_flags_replace_the_file_keys_and_log_run_works_from_python(tmp_path, monkeypatch):
    _require_mlflow()
    import mlflow

    from judgeaudit.interop.mlflow import log_run

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri, other = f"file:{tmp_path / 'mlruns'}", f"file:{tmp_path / 'elsewhere'}"
    exp = _experiment(tmp_path, f"mlflow: {other}\nmlflow_experiment: audit\n")
    r = CliRunner().invoke(app, ["run", str(exp), "--mlflow", uri])
    assert r.exit_code == 0, r.output
    _logged_run(uri, tmp_path / "o", str(tmp_path / "probes.jsonl"))
    assert not (tmp_path / "elsewhere").exists()
    # the same folder logged from Python: the same metrics, in a run of its own
    py = f"file:{tmp_path / 'py'}"
    run_id = log_run(tmp_path / "o", py, command="validity run", experiment="audit")
    logged = mlflow.MlflowClient(tracking_uri=py).get_run(run_id)
    assert logged.data.metrics == pytest.approx(_logged_run(uri, tmp_path / "o", str(tmp_path / "probes.jsonl")).data.metrics)
