"""``card --run-missing``: the default runs a card lacks, estimated before any call, confirmed, run
under OUT/runs and read by the card.

Call counts are the bundled data's: the probe set has 48 base items and 576 edits (624 graded
requests) plus 48 re-grades = 672; the CAP slices hold 90 pairs, asked in both orders = 180; the
world slice has 40 answers of 20 questions, 4 of them the structural judge's development questions and
left out, so 32 answers under 3 arms = 96; the IFEval slice has 8 responses, and the loop asks
at most a report and a revision per response under each of the two judge-calling regulators and a
revision under each of the other two = 8 × (2 + 2 + 1 + 1) = 48.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError

RUN_SECTIONS = ("validity", "cap", "vp", "world", "loop")


def _card(out: Path) -> dict:
    return json.loads((out / "card.json").read_text())


def test_without_yes_off_a_terminal_it_prints_the_estimate_and_runs_nothing(tmp_path):
    res = CliRunner().invoke(app, ["card", "--judge", "reference:length", "--run-missing", "--out", str(tmp_path / "c")])
    assert isinstance(res.exception, InputError) and res.exception.field == "--yes"   # the CLI: one line, exit 2
    assert "validity (validity): 672 calls of reference:length, 0 in the store, 672 to make; ~0 s" in res.output
    assert "cap (cap): 180 calls of reference:length, 0 in the store, 180 to make" in res.output
    assert "vp (validation_power): no judge calls" in res.output
    assert "world (world): not run — reference:length has no label verdict form" in res.output
    assert "loop (loop): not run — reference:length has no generate verdict form" in res.output
    assert "total: 3 runs, 852 judge calls to make, time ~0 s, cost $0.0000" in res.output
    assert "pass --yes" in str(res.exception) and "nothing was run" in str(res.exception)
    assert not (tmp_path / "c" / "runs").exists() and not (tmp_path / "c" / "card.json").exists()


@pytest.fixture(scope="module")
def reference_card(tmp_path_factory) -> tuple[Path, str]:
    """OUT and the output of ``card --run-missing --yes`` for reference:length (its runs are read by later
    tests too: the validation-power run needs no judge)."""
    out = tmp_path_factory.mktemp("reference") / "c"
    res = CliRunner().invoke(app, ["card", "--judge", "reference:length", "--run-missing", "--yes", "--bootstrap", "200",
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out, res.output


def test_run_missing_with_reference_judges_fills_every_section_the_judge_can_answer(reference_card):
    out, output = reference_card
    lines = output.splitlines()
    first_call = next(i for i, line in enumerate(lines) if line.startswith("reference:length: 672 requests"))
    assert lines.index("  total: 3 runs, 852 judge calls to make, time ~0 s, cost $0.0000") < first_call
    card = _card(out)
    s = card["sections"]
    assert [k for k in RUN_SECTIONS if s[k]["measured"]] == ["validity", "cap", "vp"]
    assert s["validity"]["n"]["base_items"] == 48
    # card.json names its runs relative to its own folder
    assert s["validity"]["source"]["path"] == "runs/validity/result.json"
    assert set(s["cap"]["sets"]) >= {"judgebench_fixture"} and s["cap"]["sets"]["judgebench_fixture"]["source"]["path"].startswith(
        "runs/cap/")
    assert s["world"]["not_measured"] == "not measured — reference:length has no label verdict form"
    assert s["loop"]["not_measured"] == "not measured — reference:length has no generate verdict form"
    assert sorted(p.name for p in (out / "runs").iterdir() if p.is_dir()) == ["cap", "validation_power", "validity"]
    # again into the same OUT: the runs made there are read, nothing is left to run
    res = CliRunner().invoke(app, ["card", "--judge", "reference:length", "--run-missing", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "total: 0 runs, 0 judge calls to make" in res.output
    assert _card(out)["from"] == ["runs"]      # relative to the card's folder


@pytest.fixture(scope="module")
def oracle_card(tmp_path_factory, reference_card) -> tuple[Path, dict]:
    """OUT and the card of ``judgeaudit.card("reference:oracle", [the reference card's vp run], run_missing=True)``:
    only the world section is missing and run (the oracle has only world forms)."""
    import judgeaudit

    out = tmp_path_factory.mktemp("oracle") / "c"
    vp = reference_card[0] / "runs" / "validation_power"
    return out, judgeaudit.card("reference:oracle", [vp], out, run_missing=True, yes=True, n_boot=100)


def test_run_missing_runs_the_world_for_a_world_instrument(oracle_card):
    out, card = oracle_card
    s = card["sections"]
    assert sorted(p.name for p in (out / "runs").iterdir() if p.is_dir()) == ["world"]
    assert s["vp"]["measured"]
    assert s["world"]["measured"] and s["world"]["source"]["path"] == str(out / "runs" / "world" / "result.json")
    # the oracle's informed arm is exact: recall = specificity = 1 on the 32 answers (16 hallucinated)
    assert s["world"]["numbers"]["arms.informed.recall"] == 1.0
    assert s["world"]["numbers"]["arms.informed.specificity"] == 1.0
    assert s["world"]["numbers"]["arms.informed.n"] == 32
    assert (out / "runs" / "world" / "decisions.parquet").is_file()
    assert s["validity"]["not_measured"] == "not measured — reference:oracle has no graded verdict form"


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _command_run(section: str, judge: str, out: Path, n_boot: int) -> list[str]:
    """The files the command the card names for ``section`` (``card.defaults.DEFAULT_COMMANDS``) writes for
    ``judge`` into OUT, its calls stored beside OUT (as a default run's are, in OUT/runs)."""
    import shlex

    from judgeaudit.card.defaults import DEFAULT_COMMANDS

    words = shlex.split(DEFAULT_COMMANDS[section].format(judge=judge).replace("DIR", str(out)))[1:]
    argv = words[:2]   # the command, then each option once (the oracle is also one of the world's references)
    for flag, value in zip(words[2::2], words[3::2], strict=True):
        if (flag, value) not in zip(argv[2::2], argv[3::2]):
            argv += [flag, value]
    res = CliRunner().invoke(app, [*argv, "--bootstrap", str(n_boot), "--store", str(out.parent / "calls.sqlite")])
    assert res.exit_code == 0, res.output
    return _files(out)


@pytest.mark.parametrize("section", ["validity", "world"])
def test_a_run_missing_run_folder_holds_what_the_command_writes(section, reference_card, oracle_card, tmp_path):
    """Each default run is its command's own run: the same files (the report among them) as the command the card
    names, run on the same inputs."""
    judge, (out, _) = {"validity": ("reference:length", reference_card),
                       "world": ("reference:oracle", oracle_card)}[section]
    got = _files(out / "runs" / section)
    assert "report.html" in got and "result.json" in got
    assert got == _command_run(section, judge, tmp_path / section, 50)


UNIVERSAL = '{"defective": false, "defects": [], "violated": [], "score": 5}\nScore: 5\nVerdict: A'
"""One reply every default run parses: a world label, loop reports, a grade and a pairwise verdict."""


@pytest.mark.slow
def test_run_missing_with_an_api_judge_measures_every_section_and_estimates_before_any_call(
        tmp_path, fake_server, monkeypatch, capsys):
    import judgeaudit
    from judgeaudit.runtime.store import CallStore

    srv = fake_server(responder=lambda prompt: UNIVERSAL)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
    out, judge = tmp_path / "c", "api:openai/gpt-4o-mini"
    seen = {}

    def confirm() -> bool:   # asked after the estimate, before the first call
        seen["answered"] = sum(srv.answered.values())
        seen["stored"] = (out / "runs" / "calls.sqlite").exists()
        seen["printed"] = capsys.readouterr().err
        return True

    card = judgeaudit.card(judge, [], out, run_missing=True, confirm=confirm, n_boot=100)
    assert seen["answered"] == 0 and not seen["stored"]
    assert f"validity (validity): 672 calls of {judge}, 0 in the store, 672 to make" in seen["printed"]
    assert f"world (world): 96 calls of {judge}" in seen["printed"]
    assert f"loop (loop): at most 48 calls of {judge}" in seen["printed"]
    assert "cost ≤ $" in seen["printed"]
    assert all(card["sections"][k]["measured"] for k in RUN_SECTIONS)
    with CallStore(out / "runs" / "calls.sqlite") as cs:
        assert len(cs) == sum(srv.answered.values())


def test_run_missing_whose_judge_gives_no_usable_verdict_says_so_and_exits_non_zero(tmp_path, fake_server,
                                                                                    monkeypatch):
    """Only the CAP run is missing; every one of its 180 replies is unparseable: the card's CAP section
    says the judge gave no usable verdict, the failure summary is printed and the command exits 1
    (the card is still written)."""
    from test_card_sentences import _block, _validity, _write

    judge = "api:openai/gpt-4o-mini"
    srv = fake_server(responder=lambda prompt: "I would rather not say.")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
    have = tmp_path / "have"
    _write(have / "v", _validity({judge: _block()}, "human"))
    _write(have / "p", {"config": {}, "transfer": [], "sets": {"s": {"meta": {"label_origin": "human vote"}, "item": {
        "applicable": True, "n": 10, "a_imp": 0.1, "a_imp_ci": [0.0, 0.2], "a_imp_null": {"n": 10}}}}})
    blind = {"n": 2, "n_defective": 1, "n_clean": 1, "no_verdict": 0, "answers": 2, "ties": 0, "parse_failures": 0,
             "unit": "answer", "scored": "per-answer labels", "recall": 0.5}      # every key a world run writes
    _write(have / "w", {"arms": ["blind"], "tie_rule": "any", "form": "label", "n_boot": 50, "seed": 0, "spearman": [],
                        "paired": [], "judges": {judge: {"arms": {"blind": blind}}}})
    _write(have / "l", {"judge": judge, "regulators": {"blind": {"net": 0.0}}})
    out = tmp_path / "c"
    res = CliRunner().invoke(app, ["card", "--judge", judge, "--from", str(have), "--run-missing", "--yes",
                                   "--bootstrap", "50", "--out", str(out)])
    assert res.exit_code == 1, res.output
    assert "cap (cap): 180 calls of" in res.output
    assert f"error: judge '{judge}' produced no usable verdict: 0 of 180 calls failed, 180 unparseable" in res.output
    cap = _card(out)["sections"]["cap"]
    assert not cap["measured"] and cap["not_measured"].startswith(f"run, but {judge} gave no usable verdict")
    assert "run: judgeaudit cap run" not in cap["not_measured"]
