"""``--mlflow URI`` on the analysis commands: the run's numbers, intervals and report files to an MLflow run."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console

from judgeaudit import options
from judgeaudit.commands.declared import annotation

MlflowOpt = annotation(options.MLFLOW)
MlflowExperimentOpt = annotation(options.MLFLOW_EXPERIMENT)


def check(kwargs: Mapping[str, Any]) -> None:
    """Before a command runs: ``--mlflow`` needs the mlflow package and a URI MLflow has a tracking store for
    (so a long run does not end unlogged)."""
    if kwargs.get("mlflow"):
        from judgeaudit.interop.mlflow import check_uri

        check_uri(str(kwargs["mlflow"]))


def log(command: str, kwargs: Mapping[str, Any]) -> None:
    """After a command wrote its outputs: log them to MLflow when ``--mlflow`` was given."""
    uri = kwargs.get("mlflow")
    if not uri or kwargs.get("out") is None:
        return
    from judgeaudit.interop.mlflow import log_run

    out = Path(str(kwargs["out"]))
    if not (out / "result.json").is_file():   # nothing was computed (e.g. --batch wrote a request file)
        return
    run_id = log_run(out, uri, command=command, experiment=kwargs.get("mlflow_experiment"))
    Console(stderr=True, soft_wrap=True).print(f"mlflow: logged {out} as run {run_id} at {uri}", highlight=False,
                                               markup=False)
