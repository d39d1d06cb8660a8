"""``loop run --template FILE`` against the local fake server, from the command line in this process: the
feedback judge's calls carry the template's prompt, its name, version and hash enter their call keys (a rerun
is served from the store; a new version is called again) and the result records the template."""

from __future__ import annotations

import json

from testkit import template_versions

from judgeaudit.judges.templates import read_template

REVIEW = "You are reviewing a response."
SYSTEM = "HOUSE REVIEWER. Review as our editors do."
TEMPLATE = """\
name: house-review
version: "{version}"
form: generate
source: an in-house prompt
system: """ + SYSTEM + """
user: |-
  {{{{ prompt }}}}
"""
COMMA = json.dumps({"defects": [{"quote": "x", "reason": "uses a comma"}]})
JUDGE = "api:openai/fake-judge"


def reply(prompt: str) -> str:
    if REVIEW in prompt:
        return COMMA
    prev = prompt.split("Your previous response:\n<<<\n", 1)
    return prev[1].split("\n>>>", 1)[0].replace(",", "") if len(prev) == 2 else "x"


def reviews(srv) -> list[list[dict]]:
    return [b["messages"] for b in srv.requests if any(REVIEW in m["content"] for m in b["messages"])]


def test_loop_run_sends_the_template_and_keys_the_judge_calls_by_it(ifeval_dir, tmp_path, cli_main, fake_server,
                                                                     monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=reply)
    t1, t2 = template_versions(tmp_path, TEMPLATE)
    store = tmp_path / "calls.sqlite"

    def run(template, out):
        res = cli_main("loop", "run", "--task", "ifeval", "--data", ifeval_dir, "--responder", "reference:echo",
                       "--judge", JUDGE, "--template", template, "--api-base", srv.base_url, "--regulator", "blind",
                       "--votes", "1", "--bootstrap", "0", "--max-items", "2", "--store", store,
                       "--out", tmp_path / out)
        assert res.returncode == 0, res.stderr
        return json.loads((tmp_path / out / "result.json").read_text())

    r = run(t1, "a")
    first = reviews(srv)
    assert len(first) == 2                          # one report vote per item
    for messages in first:                          # the template's system part, its user part the review request
        assert [m["role"] for m in messages] == ["system", "user"]
        assert messages[0]["content"] == SYSTEM and messages[1]["content"].startswith(REVIEW)
    ref = read_template(t1).ref()
    rec = r["templates"][JUDGE]
    assert {k: rec[k] for k in ("name", "version", "sha256")} == ref and rec["source"] == "an in-house prompt"
    assert r["judge_calls"]["blind"]["usable"] == 2

    run(t1, "b")                                    # the same template: the report votes are in the store
    assert len(reviews(srv)) == 2
    r2 = run(t2, "c")                               # a new version of it: called again
    assert len(reviews(srv)) == 4 and r2["templates"][JUDGE]["version"] == "2"
