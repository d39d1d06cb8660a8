"""The call options (--timeout, --retries, --rpm, --api-base) are declared once and mean the same on every
command that calls judges: checked before anything runs, applied to every call."""

from __future__ import annotations

import sys
import types

import pytest
from typer.testing import CliRunner
from world_fixtures import tiny_items

from judgeaudit.cli import app
from judgeaudit.errors import InputError

COMMANDS = {
    "world run": ["world", "run", "--set", "tiny:x", "--judge", "reference:constant", "--out", "o"],
    "world factorial": ["world", "factorial", "--set", "tiny:x", "--judge", "reference:constant", "--out", "o"],
    "loop run": ["loop", "run", "--task", "ifeval", "--data", "none", "--responder", "reference:echo", "--regulator",
                 "control", "--out", "o"],
    "loop worlds": ["loop", "worlds", "--set", "halueval:none", "--agent", "reference:echo", "--out", "o"],
    "validity run": ["validity", "run", "--judge", "reference:constant", "--out", "o"],
    "cap run": ["cap", "run", "--set", "llmbar:none", "--published", "--out", "o"],
    "card": ["card", "--judge", "j", "--run-missing", "--out", "o"],
}


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize("option,value,words", [("--timeout", "0", "> 0"), ("--timeout", "99999", "at most 3600"),
                                                ("--retries", "99", "at most 20"), ("--rpm", "-1", "> 0")])
def test_every_command_that_calls_judges_checks_the_call_options(name, option, value, words, tmp_path,
                                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, [*COMMANDS[name], option, value])
    assert isinstance(r.exception, InputError), r.output
    assert r.exception.field == option and words in str(r.exception)
    assert list(tmp_path.iterdir()) == []              # refused before anything was read or written


def test_world_run_applies_retries_and_api_base_to_its_calls(tmp_path, fake_server, monkeypatch):
    mod = types.ModuleType("judgeaudit.datasets.world")
    mod.load_world = lambda spec: types.SimpleNamespace(
        items=tuple(tiny_items()), provenance={"spec": spec, "files": [], "excluded": {}})
    monkeypatch.setitem(sys.modules, "judgeaudit.datasets.world", mod)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda p: '{"defective": false}')
    srv.fault("500", times=10_000)
    r = CliRunner().invoke(app, ["world", "run", "--set", "tiny:x", "--judge", "api:openai/fake-model", "--votes", "1",
                                 "--bootstrap", "0", "--permutations", "0", "--api-base", srv.base_url,
                                 "--retries", "1", "--timeout", "5", "--allow-failures", "--out",
                                 str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert len(srv.requests) == 8 * 2 * 2              # 8 items × 2 arms, each call tried twice (--retries 1)


def test_card_run_missing_takes_an_api_base():
    r = CliRunner().invoke(app, ["card", "--help"])
    assert "--api-base" in r.output and "--retries" in r.output
