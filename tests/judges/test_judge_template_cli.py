"""``judgeaudit judge --template``: a template from ``templates list`` or a file renders every item's prompt (in the
Jinja2 sandbox) and reads the reply on its scale, as ``validity run --template`` does; a template the judge cannot
use is one line, exit 2, before any call."""

from __future__ import annotations

import json

from test_templates_cli import BAD, _invoke, _one_error

from judgeaudit.judges.templates import get_template


def _items(path, n=3):
    path.write_text("\n".join(json.dumps({"item_id": f"q{i}", "prompt": f"What is {i} * 3?", "text": str(3 * i)})
                              for i in range(n)) + "\n")
    return path


def _prompt(body) -> str:
    return "\n".join(m["content"] for m in body["messages"])


def test_judge_renders_a_listed_template_and_reads_its_scale(tmp_path, fake_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda prompt: "The answer is right. Rating: [[9]]")
    out = tmp_path / "out"
    rc, log = _invoke(["judge", "--judge", "api:openai/judge-model", "--api-base", srv.base_url, "--input",
                       _items(tmp_path / "items.jsonl"), "--template", "mt-bench-single", "--out", out])
    assert rc == 0, log
    assert len(srv.requests) == 3
    # the requests run concurrently: the first item's prompt is found by its text, not its arrival order
    first = next(p for p in map(_prompt, srv.requests) if "What is 0 * 3?" in p)
    assert "[Question]\nWhat is 0 * 3?" in first and "[The Start of Assistant's Answer]\n0" in first
    rows = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    assert [r["score"] for r in rows] == [9.0, 9.0, 9.0]
    res = json.loads((out / "result.json").read_text())
    t = get_template("mt-bench-single")
    assert res["template"]["name"] == "mt-bench-single" and res["template"]["sha256"] == t.ref()["sha256"]
    assert (res["scale"]["min"], res["scale"]["max"]) == (1, 10)


def test_judge_renders_a_template_file_in_the_sandbox(tmp_path, fake_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda prompt: "Score: 4")
    mine = tmp_path / "mine.yaml"
    mine.write_text(BAD.replace("form: graded\n", "form: graded\nscale: {min: 1, max: 5}\nparser: 'Score: N'\n")
                    .replace("'Claim: {{ text }}'", "'Claim: {{ text | upper }} of {{ prompt }}'"))
    out = tmp_path / "out"
    rc, log = _invoke(["judge", "--judge", "api:openai/judge-model", "--api-base", srv.base_url, "--input",
                       _items(tmp_path / "items.jsonl", 1), "--template", mine, "--out", out])
    assert rc == 0, log
    assert _prompt(srv.requests[0]) == "Claim: 0 of What is 0 * 3?"
    assert json.loads((out / "verdicts.jsonl").read_text())["score"] == 4.0
    # a template reaching outside the sandbox is refused on the first item, before any call
    evil = tmp_path / "evil.yaml"
    evil.write_text(mine.read_text().replace("{{ text | upper }}", "{{ text.__class__.__mro__ }}"))
    n = len(srv.requests)
    rc, log = _invoke(["judge", "--judge", "api:openai/judge-model", "--api-base", srv.base_url, "--input",
                       _items(tmp_path / "items.jsonl", 1), "--template", evil, "--out", tmp_path / "evil"])
    assert rc == 2 and len(srv.requests) == n
    _one_error(log, f"{evil}:6", "the sandbox refuses it")


def test_judge_refuses_a_template_it_cannot_use_before_any_call(tmp_path, fake_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    srv = fake_server(responder=lambda prompt: "Rating: [[7]]")
    items = _items(tmp_path / "items.jsonl")
    base = ["judge", "--input", items, "--out", tmp_path / "out"]
    api = ["--judge", "api:openai/judge-model", "--api-base", srv.base_url]
    rc, log = _invoke([*base, *api, "--template", "mt-bench-pair"])              # another form
    assert rc == 2
    _one_error(log, "field '--template'", "answers pairwise requests, not graded")
    rc, log = _invoke([*base, *api, "--template", "no-such-template"])
    assert rc == 2
    _one_error(log, "unknown template 'no-such-template'")
    rc, log = _invoke([*base, "--judge", "reference:length", "--template", "mt-bench-single"])   # no templates
    assert rc == 2
    _one_error(log, "field '--template'", "takes no template")
    needs = tmp_path / "needs.yaml"                                              # a field the items lack
    needs.write_text(BAD.replace("form: graded\n", "form: graded\nscale: {min: 1, max: 10}\n")
                     .replace("'Claim: {{ text }}'", "'Reference: {{ reference }} Claim: {{ text }}'"))
    rc, log = _invoke([*base, *api, "--template", needs])
    assert rc == 2
    _one_error(log, "field 'template'", "has no such field")
    assert srv.requests == [] and not (tmp_path / "out" / "verdicts.jsonl").exists()
