"""``world run --template FILE`` against the local fake server, from the command line in this process: the
server receives the template's prompt, the template's name, version and hash enter every call key (a rerun is
served from the store; a new version is called again) and the result records the template."""

from __future__ import annotations

import json

import pytest
from testkit import template_versions
from world_fixtures import tiny_items, use_tiny_world

from judgeaudit.judges.templates import read_template

TEMPLATE = """\
name: house-world-judge
version: "{version}"
family: world
form: label
source: an in-house prompt
system: HOUSE CHECKER. You check answers against the source.
user: |-
  {{{{ world if world is defined else "No source is shown." }}}}

  {{{{ output }}}}

  {{{{ answer }}}}
"""
JUDGE = "api:openai/fake-judge"
N_ITEMS = 8   # tiny_items, one arm, one vote


@pytest.fixture(autouse=True)
def tiny_world(monkeypatch):
    use_tiny_world(monkeypatch)


WRONG = {it.output for it in tiny_items() if it.defective}


def reply(prompt: str) -> str:
    """An informed judge that is always right: defective exactly for the wrong answers."""
    output = prompt.split("Output:\n", 1)[1].split("\n\n", 1)[0]
    return json.dumps({"defective": output in WRONG})


def test_world_run_sends_the_template_and_keys_its_calls_by_it(tmp_path, cli_main, fake_server):
    srv = fake_server(responder=reply)
    t1, t2 = template_versions(tmp_path, TEMPLATE)
    store = tmp_path / "calls.sqlite"

    def run(template, out):
        res = cli_main("world", "run", "--set", "tiny:x", "--judge", JUDGE, "--template", template, "--arm", "informed",
                       "--votes", "1", "--bootstrap", "0", "--permutations", "0", "--api-base", srv.base_url,
                       "--store", store, "--out", tmp_path / out)
        assert res.returncode == 0, res.stderr
        return json.loads((tmp_path / out / "result.json").read_text())

    r = run(t1, "a")
    assert len(srv.requests) == N_ITEMS
    for body in srv.requests:   # the template's prompt, system and user parts, is what the server receives
        system, user = (m["content"] for m in body["messages"])
        assert system == "HOUSE CHECKER. You check answers against the source."
        assert user.startswith("Source material:\n") and "\n\nOutput:\n" in user and "Answer with one JSON" in user
    judge = r["judges"][JUDGE]
    ref = read_template(t1).ref()
    assert {k: judge["template"][k] for k in ("name", "version", "sha256")} == ref
    assert judge["template"]["source"] == "an in-house prompt"
    assert judge["arms"]["informed"]["balanced_accuracy"] == 1.0 and judge["arms"]["informed"]["parse_failures"] == 0

    run(t1, "b")                          # the same template: every call is in the store under its key
    assert len(srv.requests) == N_ITEMS
    r2 = run(t2, "c")                     # another version of it is another instrument: called again
    assert len(srv.requests) == 2 * N_ITEMS
    assert r2["judges"][JUDGE]["template"]["version"] == "2"
    assert r2["judges"][JUDGE]["template"]["sha256"] == ref["sha256"]      # same text, same hash; the version differs
