"""``judgeaudit check halueval`` and the entailment fallback (``--nli``) of ``loop run``/``loop worlds``:
counts on HaluEval's own answers, the route that decided each check, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from judgeaudit.errors import InputError

QA = [{"knowledge": "Paris is the capital of France.", "question": "What is the capital of France?",
       "right_answer": "Paris", "hallucinated_answer": "Lyon"},
      {"knowledge": "The tower is 300 m tall.", "question": "How tall is the tower?",
       "right_answer": "300 m", "hallucinated_answer": "The tower is 300 m tall"}]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def cli_process(*args):
    """The program as its own process (the real entry point, once per file: start-up is slow)."""
    return subprocess.run([sys.executable, "-m", "judgeaudit.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.data
@pytest.mark.parametrize(("strategy", "contained", "lexical"), [("one-turn", 39, 49), ("multi-turn", 66, 48)])
def test_halueval_own_hallucinated_answers(data_dir, tmp_path, strategy, contained, lexical):
    from judgeaudit.commands.check import run_halueval

    r = run_halueval(data_dir / "halueval", tmp_path / "a", strategy=strategy)
    assert r["answers"]["right"] == {"total": 500, "passed": 500, "by_detail": {"contains": 500}}
    h = r["answers"]["hallucinated"]
    assert (h["total"], h["passed"]) == (500, contained)
    assert r["routes"] == {"containment": 1000, "nli": 0}
    # the lexical backend (a weak overlap baseline) passes `lexical` more hallucinated answers where containment fails
    n = run_halueval(data_dir / "halueval", tmp_path / "b", strategy=strategy, nli="lexical")
    hn = n["answers"]["hallucinated"]
    assert hn["by_detail"] == {"contains": contained, "nli entails": lexical,
                               "nli does not entail": 500 - contained - lexical}
    assert hn["passed"] == contained + lexical
    assert n["routes"] == {"containment": 500 + contained, "nli": 500 - contained}
    assert n["nli"]["tau_s"] == 0.95 and n["nli"]["unusable"] == 0


def test_check_halueval_cli_routes_and_files(tmp_path, cli_main):
    d = tmp_path / "h"
    d.mkdir()
    _write(d / "qa_one-turn_data.json", QA)
    res = cli_main("check", "halueval", "--data", d, "--out", tmp_path / "o", "--nli", "lexical")
    assert res.returncode == 0, res.stderr
    out = json.loads((tmp_path / "o" / "result.json").read_text())
    # "Lyon" fails both routes; the second hallucinated answer contains the right answer
    assert out["answers"]["hallucinated"]["by_detail"] == {"contains": 1, "nli does not entail": 1}
    assert out["routes"] == {"containment": 3, "nli": 1}
    assert "routes: containment decided 3, nli 1" in res.stderr
    rows = [json.loads(x) for x in (tmp_path / "o" / "units.jsonl").read_text().splitlines()]
    assert [(x["line"], x["answer"], x["route"]) for x in rows] == [
        (1, "right", "containment"), (1, "hallucinated", "nli"), (2, "right", "containment"),
        (2, "hallucinated", "containment")]


def test_check_halueval_bad_input_is_one_line_exit_2(tmp_path, cli_main):
    d = tmp_path / "h"
    d.mkdir()
    f = _write(d / "qa_one-turn_data.json", QA)
    res = cli_main("check", "halueval", "--data", d, "--strategy", "multi-turn", "--out", tmp_path / "o")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "strategy 'multi-turn' not found; found: one-turn" in res.stderr.strip().splitlines()[-1]
    # a byte that is not UTF-8 is named with its line, not reported as a missing file
    f.write_bytes(f.read_bytes() + b'{"knowledge": "K", "question": "Q\xff", "right_answer": "A", '
                  b'"hallucinated_answer": "B"}\n')
    res = cli_main("check", "halueval", "--data", d, "--out", tmp_path / "o")
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1].startswith(f"error: {f}:3: not UTF-8 text (byte 0xff at column")
    res = cli_main("check", "halueval", "--data", d, "--out", tmp_path / "o", "--nli", "nosuch")
    assert res.returncode == 2 and "unknown NLI spec 'nosuch'" in res.stderr


def test_a_non_utf8_first_line_is_named_by_every_halueval_reader(tmp_path):
    from judgeaudit.datasets.halueval import load_pairs
    from judgeaudit.loop.tasks import load_task

    f = tmp_path / "qa_one-turn_data.json"
    f.write_bytes(b'{"knowledge": "K\xe9", "question": "Q", "right_answer": "A", "hallucinated_answer": "B"}\n')
    for load in (lambda: load_pairs(tmp_path), lambda: load_task("halueval_qa", tmp_path)):
        with pytest.raises(InputError) as e:
            load()
        assert (e.value.path, e.value.line) == (str(f), 1) and "byte 0xe9" in e.value.message


def test_loop_halueval_loader_never_falls_back_to_another_strategy(tmp_path):
    from judgeaudit.loop.tasks import load_task

    _write(tmp_path / "qa_multi-turn_data.json", QA)
    with pytest.raises(InputError, match="strategy 'one-turn' not found; found: multi-turn"):
        load_task("halueval_qa", tmp_path)
    assert len(load_task("halueval_qa", tmp_path, strategy="multi-turn").items) == 2


def test_loop_halueval_loader_excludes_an_empty_knowledge_with_its_count(tmp_path):
    from judgeaudit.loop.tasks import load_task

    _write(tmp_path / "qa_one-turn_data.json", [QA[0], {**QA[1], "knowledge": " "}])
    t = load_task("halueval_qa", tmp_path)
    assert [it.item_id for it in t.items] == ["1"]
    assert t.excluded == {"the world (knowledge) is missing or empty": 1}


def test_loop_run_nli_option_counts_routes(tmp_path, cli_main):
    d = tmp_path / "h"
    d.mkdir()
    _write(d / "qa_one-turn_data.json", QA)
    init = _write(tmp_path / "init.jsonl", [{"item_id": "1", "output": "Lyon"}, {"item_id": "2", "output": "300 m"}])
    res = cli_main("loop", "run", "--task", "halueval_qa", "--data", d, "--initial", f"replay:{init}", "--responder",
                   "reference:echo", "--regulator", "control", "--out", tmp_path / "o", "--bootstrap", "20",
                   "--nli", "lexical")
    assert res.returncode == 0, res.stderr
    r = json.loads((tmp_path / "o" / "result.json").read_text())
    assert r["checker"] == "HaluEval QA containment, then entailment by lexical (P(entail) >= 0.95)"
    assert r["checker_routes"]["checks"] == {"contains": 1, "nli does not entail": 1}
    assert r["checker_routes"]["nli_unusable"] == 0
    res = cli_process("loop", "run", "--task", "gsm8k", "--data", d, "--responder", "reference:echo",
                      "--regulator", "control", "--out", tmp_path / "o2", "--nli", "lexical")
    assert res.returncode == 2 and "--nli is HaluEval QA's entailment fallback" in res.stderr


def test_an_nli_fallback_with_no_usable_reply_is_not_a_clean_result(tmp_path):
    import numpy as np

    from judgeaudit.commands.loop import checker_routes, nli_failed
    from judgeaudit.loop.tasks import load_task
    from judgeaudit.structural.answer_entailment import EntailmentFallback
    from judgeaudit.structural.nli import NLIBackend

    class Silent(NLIBackend):
        spec = "api:silent"

        def _predict_batch(self, pairs):
            return np.full((len(pairs), 3), np.nan)

    _write(tmp_path / "qa_one-turn_data.json", QA)
    fb = EntailmentFallback(Silent(), 0.95)
    t = load_task("halueval_qa", tmp_path, nli=fb)
    assert not t.check(t.items[0], "Lyon").passed
    r = {"checker_routes": checker_routes(t, fb)}
    assert r["checker_routes"]["nli_unusable"] == 1
    assert nli_failed(r["checker_routes"]) == "the NLI fallback api:silent gave no usable reply in 1 check(s)"


def test_check_halueval_exits_1_when_the_nli_fallback_never_answers(tmp_path, monkeypatch):
    import numpy as np
    from typer.testing import CliRunner

    from judgeaudit.cli import app
    from judgeaudit.structural.nli import LexicalNLI

    monkeypatch.setattr(LexicalNLI, "_predict_batch", lambda self, pairs: np.full((len(pairs), 3), np.nan))
    d = tmp_path / "h"
    d.mkdir()
    _write(d / "qa_one-turn_data.json", QA)
    res = CliRunner().invoke(app, ["check", "halueval", "--data", str(d), "--out", str(tmp_path / "o"), "--nli",
                                   "lexical"])
    assert res.exit_code == 1 and "the NLI fallback lexical gave no usable reply in 1 check(s)" in res.output
    assert json.loads((tmp_path / "o" / "result.json").read_text())["nli"]["unusable"] == 1
    res = CliRunner().invoke(app, ["check", "halueval", "--data", str(d), "--out", str(tmp_path / "o2"), "--nli",
                                   "lexical", "--allow-failures"])
    assert res.exit_code == 0 and "kept going (--allow-failures)" in res.output


def test_loop_worlds_nli_option_counts_routes(tmp_path):
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "loop"))
    from scripted import Constant

    from judgeaudit.commands.loop import run_worlds_command

    rows = [{"knowledge": f"K{i}.", "question": f"Q{i}?", "right_answer": "Paris", "hallucinated_answer": "Lyon"}
            for i in range(5)]
    _write(tmp_path / "qa_one-turn_data.json", rows)
    r = run_worlds_command(set_=f"halueval:{tmp_path}", agent=Constant("Lyon"), out=tmp_path / "o",
                           progress=False, nli="lexical")
    # 7 worlds x 5 questions, every answer "Lyon": containment fails, the fallback decides (and does not entail)
    assert r["checker_routes"]["checks"] == {"nli does not entail": 35}
    assert all(x["correct"] == 0 for x in r["worlds"].values())
    assert r["checker"].startswith("HaluEval QA containment, then entailment by lexical")
    base = run_worlds_command(set_=f"halueval:{tmp_path}", agent=Constant("Lyon"), out=tmp_path / "o2",
                              progress=False)
    assert base["checker"] == "HaluEval QA containment" and base["checker_routes"]["checks"] == {
        "does not contain": 35}
