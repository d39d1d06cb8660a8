"""Bad options and input of ``judgeaudit loop``: one InputError naming the option, file or field."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError


def _err(argv):
    r = CliRunner().invoke(app, [str(a) for a in argv])
    assert isinstance(r.exception, InputError), r.output
    return str(r.exception)


def _base(d, out, *extra):
    return ["loop", "run", "--task", "ifeval", "--data", d, "--responder", "reference:echo", "--out", out, *extra]


def test_bad_options(ifeval_dir, tmp_path):
    out = tmp_path / "o"
    assert "--rounds" in _err(_base(ifeval_dir, out, "--regulator", "control", "--rounds", "0"))
    assert "--votes" in _err(_base(ifeval_dir, out, "--regulator", "control", "--votes", "0"))
    assert "--max-items" in _err(_base(ifeval_dir, out, "--regulator", "control", "--max-items", "0"))
    assert "unknown regulator 'oracle'" in _err(_base(ifeval_dir, out, "--regulator", "oracle"))
    assert "needs a judge" in _err(_base(ifeval_dir, out, "--regulator", "blind"))
    assert "unknown task" in _err(["loop", "run", "--task", "mmlu", "--data", ifeval_dir, "--responder",
                                   "reference:echo", "--out", out, "--regulator", "control"])
    assert not out.exists() or not (out / "result.json").exists()


def test_second_family_must_differ(ifeval_dir, tmp_path):
    msg = _err(_base(ifeval_dir, tmp_path / "o", "--regulator", "second_blind", "--judge", "api:openai/gpt-4o-mini",
                     "--judge2", "api:openai/gpt-4.1"))
    assert "shares the family openai" in msg


def test_shipped_missing_and_bad_replay(tmp_path, data_dir):
    from judgeaudit.commands.loop import run_loop_command

    with pytest.raises(InputError, match="no shipped output"):
        run_loop_command(task="halueval_qa", data=data_dir / "halueval", initial="shipped",
                         responder="reference:echo", judge=None, regulators=["control"], out=tmp_path / "o",
                         max_items=3, progress=False)
    bad = tmp_path / "init.jsonl"
    bad.write_text(json.dumps({"item_id": "1", "text": "x"}) + "\n")
    with pytest.raises(InputError) as e:
        run_loop_command(task="halueval_qa", data=data_dir / "halueval", initial=f"replay:{bad}",
                         responder="reference:echo", judge=None, regulators=["control"], out=tmp_path / "o",
                         max_items=3, progress=False)
    assert e.value.line == 1 and e.value.field == "output"


def test_replay_initial_and_max_items_keep_the_first_items(tmp_path, data_dir):
    from judgeaudit.commands.loop import run_loop_command

    init = tmp_path / "init.jsonl"
    init.write_text("".join(json.dumps({"item_id": str(k), "output": "Arthur's Magazine"}) + "\n"
                            for k in range(1, 4)))
    r = run_loop_command(task="halueval_qa", data=data_dir / "halueval", initial=f"replay:{init}",
                         responder="reference:echo", judge=None, regulators=["control", "certificate"],
                         out=tmp_path / "o", max_items=3, bootstrap=20, progress=False)
    # only item 1's right answer is "Arthur's Magazine"
    assert r["before"] == {"pass_rate": pytest.approx(1 / 3), "loose_pass_rate": pytest.approx(1 / 3), "n_units": 3,
                           "n_responses": 3}
    assert r["regulators"]["certificate"]["acted_on"] == 2


def test_halueval_nli_fallback_decides_when_containment_fails(data_dir):
    from judgeaudit.loop.tasks import load_task

    calls = []

    def nli(q, right, out):
        calls.append((right, out))
        return out == "the older one"

    t = load_task("halueval_qa", data_dir / "halueval", max_items=1, nli=nli)
    it = t.items[0]
    assert t.check(it, "Arthur's Magazine").passed and calls == []        # containment: no NLI call
    assert t.check(it, "the older one").passed and not t.check(it, "First for Women").passed
    assert calls == [("Arthur's Magazine", "the older one"), ("Arthur's Magazine", "First for Women")]
