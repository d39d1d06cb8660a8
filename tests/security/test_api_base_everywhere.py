"""Every call of every command, and of every ``card --run-missing`` step, goes to the server ``--api-base``
names: two loopback servers, one named by ``--api-base``, the other set as the provider's default endpoint
(``OPENAI_BASE_URL``, ``OPENAI_API_BASE``); the second must receive no request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner
from validityshape import validity_result

import judgeaudit
from judgeaudit.cli import app

DATA = Path(judgeaudit.__file__).parent / "data"
JUDGE = "api:openai/gpt-4o-mini"
UNIVERSAL = '{"defective": false, "defects": [], "violated": [], "score": 5}\nScore: 5\nVerdict: A'
"""One reply every run parses: a world label, loop reports, a grade and a pairwise verdict."""


BLOCK = {"S": 0.93, "S_ci": [0.9, 0.96], "R": 0.31, "R_ci": [0.25, 0.37], "R_scope": 0.40,
         "R_scope_ci": [0.33, 0.47], "R_strength": 0.20, "R_strength_ci": [0.14, 0.27], "gap": 0.20,
         "gap_ci": [0.10, 0.30], "R_plus": 0.2, "R_plus_ci": [0.15, 0.25], "wrong_way_rate": 0.11,
         "wrong_way_rate_ci": [0.07, 0.15], "control_flip_rate": 0.07, "control_flip_rate_ci": [0.04, 0.10],
         "gap_perm_p": 0.002, "R_excess": 0.24, "R_excess_ci": [0.17, 0.31], "tau": 5.0, "interpretable": True,
         "single_point": False, "n_construct": 336, "n_control": 240, "notes": []}
"""A validity result's block for the judge (the card reads it; nothing is recomputed)."""


@pytest.fixture
def two_servers(fake_server, monkeypatch):
    named = fake_server(responder=lambda prompt: UNIVERSAL)
    decoy = fake_server(responder=lambda prompt: UNIVERSAL)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", decoy.base_url)
    monkeypatch.setenv("OPENAI_API_BASE", decoy.base_url)
    return named, decoy


def _write(folder: Path, data: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "result.json").write_text(json.dumps({**data, "run_id": f"run-{folder.name}",
                                                    "created_at": "2026-09-02T00:00:00+00:00"}))
    return folder


def _items(tmp: Path) -> Path:
    p = tmp / "items.jsonl"
    p.write_text("".join(json.dumps({"item_id": f"i{i}", "text": f"claim {i}", "evidence": "e"}) + "\n"
                         for i in range(3)))
    return p


COMMANDS = {
    "judge": lambda tmp, base: ["judge", "--judge", JUDGE, "--input", str(_items(tmp)), "--out", str(tmp / "o"),
                                "--api-base", base],
    "loop run": lambda tmp, base: ["loop", "run", "--task", "ifeval", "--data", str(DATA / "ifeval"),
                                   "--responder", JUDGE, "--judge", JUDGE, "--regulator", "blind", "--rounds", "1",
                                   "--max-items", "2", "--bootstrap", "20", "--out", str(tmp / "o"),
                                   "--api-base", base],
    "validity run": lambda tmp, base: ["validity", "run", "--probes", "bundled", "--judge", JUDGE, "--regrade", "4",
                                       "--bootstrap", "20", "--out", str(tmp / "o"), "--api-base", base],
    "cap run": lambda tmp, base: ["cap", "run", "--set", f"llmbar:{DATA / 'llmbar'}", "--judge", JUDGE,
                                  "--bootstrap", "20", "--out", str(tmp / "o"), "--api-base", base],
    "migrate": lambda tmp, base: ["migrate", "--old", JUDGE, "--new", "api:openai/gpt-4.1-mini", "--items",
                                  str(_items(tmp)), "--bootstrap", "20", "--out", str(tmp / "o"), "--api-base", base],
    "world run": lambda tmp, base: ["world", "run", "--set", f"halueval:{DATA / 'halueval'}", "--judge", JUDGE,
                                    "--max-items", "4", "--votes", "1", "--bootstrap", "20", "--out",
                                    str(tmp / "o"), "--api-base", base],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_call_of_a_command_goes_to_its_api_base(command, two_servers, tmp_path):
    named, decoy = two_servers
    r = CliRunner().invoke(app, COMMANDS[command](tmp_path, named.base_url))
    assert r.exit_code == 0, (r.output, r.exception)
    assert len(named.requests) > 0
    assert len(decoy.requests) == 0, f"{len(decoy.requests)} calls went to the provider's default endpoint"


def test_the_loop_step_of_card_run_missing_goes_to_its_api_base(two_servers, tmp_path):
    """Only the loop section is missing (the others are given): its calls, the responder's and the judge's,
    go to ``--api-base``."""
    named, decoy = two_servers
    have = tmp_path / "have"
    _write(have / "v", validity_result({JUDGE: BLOCK}, direction_source="human"))
    _write(have / "p", {"config": {}, "transfer": [], "sets": {"s": {"meta": {"label_origin": "human vote"}, "item": {
        "applicable": True, "n": 10, "a_imp": 0.1, "a_imp_ci": [0.0, 0.2], "a_imp_null": {"n": 10}}}}})
    blind = {"n": 2, "n_defective": 1, "n_clean": 1, "no_verdict": 0, "answers": 2, "ties": 0, "parse_failures": 0,
             "unit": "answer", "scored": "per-answer labels", "recall": 0.5}      # every key a world run writes
    _write(have / "w", {"arms": ["blind"], "tie_rule": "any", "form": "label", "n_boot": 20, "seed": 0, "spearman": [],
                        "paired": [], "judges": {JUDGE: {"arms": {"blind": blind}}}})
    r = CliRunner().invoke(app, ["card", "--judge", JUDGE, "--from", str(have), "--run-missing", "--yes",
                                 "--bootstrap", "20", "--out", str(tmp_path / "c"), "--api-base", named.base_url])
    assert r.exit_code == 0, (r.output, r.exception)
    assert "loop (loop): at most 48 calls" in r.output, r.output
    assert (tmp_path / "c" / "runs" / "loop" / "result.json").is_file()
    assert len(named.requests) > 0, r.output
    assert len(decoy.requests) == 0, f"{len(decoy.requests)} calls went to the provider's default endpoint"


def test_every_step_of_card_run_missing_goes_to_its_api_base(two_servers, tmp_path):
    """Nothing given: the validity, CAP, world and loop steps all run, and every call goes to ``--api-base``."""
    named, decoy = two_servers
    r = CliRunner().invoke(app, ["card", "--judge", JUDGE, "--run-missing", "--yes", "--bootstrap", "20",
                                 "--out", str(tmp_path / "c"), "--api-base", named.base_url])
    assert r.exit_code == 0, (r.output, r.exception)
    for step in ("validity", "world", "loop"):
        assert f"{step} ({step}):" in r.output, r.output
    assert len(named.requests) > 700
    assert len(decoy.requests) == 0, f"{len(decoy.requests)} calls went to the provider's default endpoint"
