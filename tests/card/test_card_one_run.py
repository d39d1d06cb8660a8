"""A card reads one run per section, never the newest silently: two validity runs of one judge under
one ``--from`` (``--s-floor 0.9`` and ``--s-floor 0.5``, the second made later) are refused by
``card`` and by ``gate --from``, with both runs listed; ``--run PATH`` chooses which one is read."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner
from validityshape import judge_block, validity_result

from judgeaudit.card.build import build_card
from judgeaudit.card.sources import collect
from judgeaudit.cli import app
from judgeaudit.errors import InputError

J = "api:acme/judge-1"


def _validity(folder: Path, s_floor: float, S: float, S_ci: list[float], made: str) -> None:
    folder.mkdir(parents=True)
    block = judge_block(S, S_ci, 0.6, [0.45, 0.75])
    (folder / "result.json").write_text(json.dumps({**validity_result({J: block}, s_floor=s_floor,
                                                                      direction_source="human"),
                                                    "run_id": f"run-{s_floor}", "created_at": made}))


def _two_runs(root: Path) -> tuple[Path, Path]:
    strict, loose = root / "v-strict", root / "v-loose"
    _validity(strict, 0.9, 0.93, [0.90, 0.96], "2026-09-01T00:00:00+00:00")
    _validity(loose, 0.5, 0.73, [0.50, 0.89], "2026-09-02T00:00:00+00:00")   # re-run later, at a lower floor
    return strict, loose


def test_two_validity_runs_of_one_judge_are_refused_and_listed(tmp_path):
    strict, loose = _two_runs(tmp_path)
    try:
        build_card(J, collect([tmp_path]))
    except InputError as e:
        msg = str(e)
        assert e.field == "--run" and "2 validity runs of " + J in msg
        assert str(strict) in msg and str(loose) in msg and "s_floor 0.9" in msg and "s_floor 0.5" in msg
    else:
        raise AssertionError("the card read one of two validity runs without a word")
    res = CliRunner().invoke(app, ["card", "--judge", J, "--from", str(tmp_path), "--out", str(tmp_path / "c")])
    assert res.exit_code != 0 and not (tmp_path / "c" / "card.json").exists()


def test_run_chooses_the_run_the_card_reads(tmp_path):
    strict, loose = _two_runs(tmp_path)
    for chosen, floor in ((strict, 0.9), (loose / "result.json", 0.5)):
        card = build_card(J, collect([tmp_path]), chosen=[chosen]).to_json()
        assert card["sections"]["validity"]["s_floor"] == floor
    res = CliRunner().invoke(app, ["card", "--judge", J, "--from", str(tmp_path), "--run", str(strict),
                                   "--out", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "c" / "card.json").read_text())["sections"]["validity"]["s_floor"] == 0.9


def test_a_folder_given_twice_is_one_run(tmp_path):
    strict, _ = _two_runs(tmp_path)
    assert build_card(J, collect([strict, strict, strict / "result.json"])).sections.validity.measured


def test_gate_from_refuses_two_runs_and_reads_the_one_named(tmp_path):
    strict, loose = _two_runs(tmp_path)
    policy = tmp_path / "p.yaml"
    policy.write_text("bars:\n  - name: stays put on control edits\n    bar: S >= 0.5\n")
    res = CliRunner().invoke(app, ["gate", str(policy), "--from", str(tmp_path), "--judge", J])
    assert res.exit_code == 3, res.output                 # not PASS on whichever run is newest
    assert f"2 validity runs of {J}" in res.output and str(strict) in res.output and str(loose) in res.output
    res = CliRunner().invoke(app, ["gate", str(policy), "--from", str(tmp_path), "--judge", J, "--run", str(loose)])
    # read from the named run: its S floor 0.5 implies the bar, which the gate then calls BLIND (it cannot fail)
    assert res.exit_code == 2 and "implied by the run's S floor 0.5" in res.output, res.output
