"""Fixtures the gate's tests share."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from judgeaudit.cli import app


def _invoke(argv):
    r = CliRunner().invoke(app, [str(a) for a in argv])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.output


@pytest.fixture(scope="session")
def replayed_validity_run(tmp_path_factory):
    """A validity run of two planted judges fed entirely by a replay file (no model call): 'perfect'
    flips on every construct edit, 'scope_only' on scope edits only."""
    from judgeaudit.probes.io import bundled_probes_path, read_probes
    from judgeaudit.probes.taxonomy import SLOT_BY_NAME
    from judgeaudit.records import probes_frame

    root = tmp_path_factory.mktemp("gate_replay")
    lines = bundled_probes_path().read_text(encoding="utf-8").splitlines()[:48]     # the first 4 base items
    (root / "probes.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    probes = probes_frame(read_probes(root / "probes.jsonl"))
    rows = []
    for judge in ("perfect", "scope_only"):
        rows += [{"judge_id": judge, "request_id": b, "score": 2.0} for b in probes["base_id"].unique()]
        for r in probes.itertuples():
            axis = SLOT_BY_NAME[r.slot].axis
            moves = axis != "control" and (judge == "perfect" or axis == "scope")
            rows.append({"judge_id": judge, "request_id": r.probe_id, "score": 8.0 if moves else 2.0})
    replay = root / "verdicts.csv"
    pd.DataFrame(rows).to_csv(replay, index=False)
    code, out = _invoke(["validity", "run", "--probes", root / "probes.jsonl", "--judge", f"replay:{replay}", "--bootstrap", 50,
                         "--regrade", 0, "--out", root / "run"])
    assert code == 0, out
    assert json.loads((root / "run" / "result.json").read_text())["answers"]["replayed"] > 0
    return root / "run"
