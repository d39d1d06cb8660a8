"""MLflow logging of a run's results (``pip install 'judgeaudit[mlflow]'``; ``--mlflow URI`` on the analysis
commands).

One MLflow run per command run, in the experiment ``--mlflow-experiment`` (default ``judgeaudit``) of the
tracking URI (a local ``file:`` folder or an ``sqlite:`` database needs no server; any tracking server works):

* **metrics** — every number of the run's ``result.json`` (its headline numbers, per judge and arm), named by
  its path in the file with ``.`` between keys (``judges.local.S``); an interval, a pair ``[lo, hi]`` under a
  key, is logged as ``<key>.lo`` and ``<key>.hi``. Booleans, text and longer lists (per-item tables, bootstrap
  draws) are not metrics. The values are the file's numbers as written, so a metric equals its entry in
  ``result.json``.
* **params** — the command, the output folder, and the file's top-level text and whole-number settings.
* **artifacts** — the report files in the output folder (``result.json``, ``report.html``, ``report.md``,
  ``verdicts.parquet``, ``card.json`` …, whichever exist); a new experiment of an ``sqlite:`` store keeps them
  in ``mlartifacts/`` beside the database.

MLflow 3 keeps its ``file:`` store in maintenance mode: it refuses it unless ``MLFLOW_ALLOW_FILE_STORE=true``
is set; an ``sqlite:`` database (the ``mlflow`` extra installs SQLAlchemy and Alembic for it) needs nothing.

MLflow limits a metric name to letters, digits and ``_ - . / :`` and spaces: other characters become ``_``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from judgeaudit.errors import InputError

EXTRA = "pip install 'judgeaudit[mlflow]'"
DEFAULT_EXPERIMENT = "judgeaudit"
ARTIFACTS = ("result.json", "report.html", "report.md", "verdicts.parquet", "card.json", "card.html",
             "register.json", "summary.md", "manifest.json")
_BAD = re.compile(r"[^A-Za-z0-9_\-./: ]")


def require_mlflow() -> Any:
    """The ``mlflow`` package, or an InputError naming the extra that installs it."""
    try:
        import mlflow
    except ImportError:
        raise InputError(f"--mlflow needs the mlflow package ({EXTRA})", field="--mlflow") from None
    return mlflow


def check_uri(uri: str) -> None:
    """Before the run: MLflow has a tracking store for ``uri``'s scheme (its own registry's lookup, which
    ``MlflowClient`` uses), else an ``InputError`` naming ``--mlflow`` — never a traceback after the run."""
    require_mlflow()
    try:
        from mlflow.tracking._tracking_service import utils as tracking
    except ImportError:   # an MLflow without this module: the client says what it cannot use, after the run
        return
    registry = getattr(tracking, "_tracking_store_registry", None)
    if registry is None and hasattr(tracking, "_get_tracking_store_registry"):
        registry = tracking._get_tracking_store_registry()
    if registry is None or not hasattr(registry, "get_store_builder"):
        return
    try:
        registry.get_store_builder(uri)
    except Exception as e:  # noqa: BLE001 - MlflowException (an unknown scheme) or a malformed URI
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise InputError(f"{uri!r} is not a tracking URI MLflow can log to ({first[:200]})", field="--mlflow") from None


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def metric_name(path: list[str]) -> str:
    return _BAD.sub("_", ".".join(path))[:250]


def flatten_metrics(obj: Any, path: list[str] | None = None) -> dict[str, float]:
    """The numbers of a result document by path (see the module docstring); NaN and infinities are left out."""
    path = path or []
    out: dict[str, float] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten_metrics(v, [*path, str(k)]))
    elif isinstance(obj, (list, tuple)):
        if len(obj) == 2 and path and all(_number(x) is not None or x is None for x in obj):
            for end, x in zip(("lo", "hi"), obj, strict=True):
                if (f := _number(x)) is not None:
                    out[metric_name([*path, end])] = f
    elif (f := _number(obj)) is not None and path:
        out[metric_name(path)] = f
    return out


def artifact_location(uri: str) -> str | None:
    """Where a new experiment keeps its artifacts: beside an ``sqlite:`` database, in ``mlartifacts/`` (MLflow
    would otherwise use ``./mlruns`` in the current folder); None (MLflow's choice) for any other store."""
    if uri.startswith("sqlite:///"):
        db = Path(uri.removeprefix("sqlite:///"))
        return (db.resolve().parent / "mlartifacts").as_uri()
    return None


def params_of(doc: dict[str, Any]) -> dict[str, str]:
    """The top-level text and whole-number settings of a result document, as MLflow params."""
    return {_BAD.sub("_", str(k))[:250]: str(v)[:500] for k, v in doc.items()
            if isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))}


def log_run(out: str | Path, uri: str, *, command: str, experiment: str | None = None) -> str:
    """Log the run in folder ``out`` (its ``result.json`` and report files) to a new MLflow run; its run id."""
    mlflow = require_mlflow()
    out = Path(out)
    result = out / "result.json"
    if not result.is_file():
        raise InputError("no result.json to log to MLflow", path=result, field="--mlflow")
    doc = json.loads(result.read_text(encoding="utf-8"))
    metrics = flatten_metrics(doc)
    client = mlflow.MlflowClient(tracking_uri=uri)
    name = experiment or DEFAULT_EXPERIMENT
    found = client.get_experiment_by_name(name)
    exp_id = found.experiment_id if found is not None else \
        client.create_experiment(name, artifact_location=artifact_location(uri))
    run = client.create_run(exp_id, run_name=f"{command} {out.name}", tags={"judgeaudit.command": command})
    run_id = run.info.run_id
    try:
        from mlflow.entities import Metric, Param

        now = int(__import__("time").time() * 1000)
        params = {"command": command, "out": str(out), **(params_of(doc) if isinstance(doc, dict) else {})}
        items = list(metrics.items())
        for i in range(0, max(len(items), 1), 1000):   # MLflow takes at most 1000 metrics a batch
            chunk = items[i : i + 1000]
            client.log_batch(run_id, metrics=[Metric(k, v, now, 0) for k, v in chunk],
                             params=[Param(k, v) for k, v in params.items()] if i == 0 else [])
        for fname in ARTIFACTS:
            if (out / fname).is_file():
                client.log_artifact(run_id, str(out / fname))
        client.set_terminated(run_id, "FINISHED")
    except Exception:
        client.set_terminated(run_id, "FAILED")
        raise
    return run_id
