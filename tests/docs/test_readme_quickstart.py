"""The README's quick start, run as written against a loopback OpenAI-compatible judge, reaches a card."""

from __future__ import annotations

import json
import shlex

from docblocks import ROOT, blocks, in_process, judge_reply, run_page

README = ROOT / "README.md"


def _endpoint_block() -> dict[str, str]:
    """The variables the README's endpoint block exports (the reader's own server; marked not-run)."""
    (block,) = [b for b in blocks(README) if b.is_shell and b.text.lstrip().startswith("export JUDGE=")]
    assert block.not_run, "the endpoint block names the reader's own server: it is marked not-run"
    words = shlex.split(block.text, comments=True)
    return dict(w.split("=", 1) for w in words[1:])


def test_the_readme_quick_start_run_as_written_reaches_a_card_for_the_readers_judge(tmp_path, fake_server, capsys,
                                                                                  monkeypatch):
    srv = fake_server(responder=judge_reply)
    env = _endpoint_block()
    assert env["JUDGE"].startswith("api:openai/") and env["JUDGE_URL"].endswith("/v1")
    env["JUDGE_URL"] = srv.base_url                       # the reader's server, here the loopback one
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)    # a local server needs no key
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").symlink_to(ROOT / "src")            # run from the clone's root: the shipped slices
    page = run_page(README, tmp_path, env, in_process(capsys, monkeypatch))

    assert page.ran == [
        "judgeaudit templates list",
        'judgeaudit validity run --judge $JUDGE --api-base $JUDGE_URL --template my_grader.yaml --out runs/validity',
        "judgeaudit cap run --set llmbar:src/judgeaudit/data/llmbar --judge $JUDGE --api-base $JUDGE_URL "
        "--template llmbar-vanilla --out runs/cap",
        "judgeaudit card --judge $JUDGE --from runs/ --out card/",
    ]
    # the reader's grader and LLMBar's prompt reached the server, and only them
    prompts = ["\n".join(m["content"] for m in r["messages"]) for r in srv.requests]
    graded = [p for p in prompts if "Rate how well the claim stays within the evidence, 1 to 10" in p]
    pairwise = [p for p in prompts if "Select the Output (a) or Output (b)" in p]
    assert len(graded) > 0 and len(pairwise) > 0 and len(graded) + len(pairwise) == len(prompts)
    assert {r["model"] for r in srv.requests} == {env["JUDGE"].removeprefix("api:openai/")}

    card = json.loads((tmp_path / "card" / "card.json").read_text())
    assert card["judge"] == env["JUDGE"]
    assert card["sections"]["validity"]["measured"] and card["sections"]["cap"]["measured"]
    assert (tmp_path / "card" / "card.html").stat().st_size > 0 and (tmp_path / "card" / "card.md").exists()
    assert "runs/validity/report.html" in " ".join(page.outputs)
