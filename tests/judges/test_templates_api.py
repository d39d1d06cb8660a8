"""A user's judge template through the api backend, against the local fake server, end to end from the CLI:
the MT-Bench single-answer grader on the validity probes (its 1–10 scale, its frontier), a pass/fail
template (one operating point), and the Arena-Hard pairwise grader in a CAP run (five-way labels)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import judgeaudit
from judgeaudit.cli import app
from judgeaudit.judges import make_judge
from judgeaudit.probes.io import bundled_probes_path, read_probes
from judgeaudit.probes.taxonomy import SLOT_BY_NAME
from judgeaudit.records import JudgeRequest, probes_frame
from judgeaudit.runtime.store import CallStore

DATA = Path(judgeaudit.__file__).parent / "data"
ANSWER_RE = re.compile(r"\[The Start of Assistant's Answer\]\n(.*?)\n\[The End of Assistant's Answer\]", re.S)


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


N_BASE = 10


@pytest.fixture(scope="module")
def probe_file(tmp_path_factory) -> Path:
    """The bundled probes of the first ten base items (every slot of each)."""
    lines = bundled_probes_path().read_text().splitlines()
    bases = list(dict.fromkeys(json.loads(x)["base_id"] for x in lines))[:N_BASE]
    path = tmp_path_factory.mktemp("probes") / "probes.jsonl"
    path.write_text("\n".join(x for x in lines if json.loads(x)["base_id"] in bases) + "\n")
    return path


@pytest.fixture(scope="module")
def construct_texts(probe_file) -> set[str]:
    """The edited texts of construct-changing probes (the ones a valid judge must move on)."""
    probes = probes_frame(read_probes(probe_file))
    assert probes["base_id"].nunique() == N_BASE
    return {r.edited for r in probes.itertuples() if SLOT_BY_NAME[r.slot].axis != "control"}


def test_mt_bench_reply_is_read_as_7_on_1_to_10(fake_server):
    srv = fake_server(responder=lambda prompt: "The answer restates 2 of the 3 findings.\n\nRating: [[7]]")
    j = make_judge("api:openai/judge-model", api_base=srv.base_url, template="mt-bench-single")
    r = JudgeRequest(request_id="q1", prompt="What did the trial find?", text="It lowered blood pressure.")
    v = asyncio.run(j.judge_one(r))
    assert v.parse_ok and v.score == 7.0 and v.score_source == "parsed"
    body = srv.requests[-1]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == "You are a helpful assistant."
    assert "logprobs" not in body and body["max_tokens"] == 1024
    for reply, ok in (("Rating: [[10]]", True), ("Rating: [[11]]", False), ("Rating: [[7.5]]", False),
                      ("[[7]] then [[8]]", False)):
        srv.responder = lambda prompt, reply=reply: reply
        v = asyncio.run(j.judge_one(r.model_copy(update={"request_id": reply})))
        assert v.parse_ok == ok, reply
        assert ok or v.meta["parse_error"]


def test_validity_run_reads_the_mt_bench_frontier_on_its_scale(tmp_path, fake_server, probe_file, construct_texts):
    """A planted MT-Bench grader: 7 for an original or a construct-preserving edit, 3 for a construct-changing
    one. On 1–10 with higher = better, the reflected grades are 4 and 8: S = R = 1 at τ = 8."""

    def respond(prompt: str) -> str:
        text = ANSWER_RE.search(prompt).group(1)
        return f"Compared with the evidence, the claim is judged.\n\nRating: [[{3 if text in construct_texts else 7}]]"

    srv = fake_server(responder=respond)
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["validity", "run", "--judge", "api:openai/judge-model", "--template", "mt-bench-single",
                                 "--judge", "reference:constant", "--api-base", srv.base_url, "--probes", str(probe_file),
                                 "--bootstrap", "100", "--regrade", "8", "--out", str(out)])
    assert r.exit_code == 0, r.output
    res = json.loads((out / "result.json").read_text())
    j = res["judges"]["api:openai/judge-model"]
    assert j["template"]["name"] == "mt-bench-single" and j["template"]["version"] == "single-v1"
    assert j["template"]["parser"] == "[[rating]]" and "Zheng et al. 2023" in j["template"]["source"]
    assert j["scale"]["label"] == "1-10" and j["scale"]["higher"] == "better" and j["scale"]["reflected"]
    assert (j["S"], j["R"], j["tau"], j["interpretable"]) == (1.0, 1.0, 8.0, True)
    assert [t for _, _, t in j["frontier"]] == [4.0, 8.0, 9.0] and j["scale"]["operating_points"] == 1
    assert j["parse_failures"] == 0
    c = res["judges"]["reference:constant"]
    assert c["template"] is None and c["scale"]["label"] == "1-9"
    v = pd.read_parquet(out / "verdicts.parquet")
    assert set(v.loc[v["judge_id"] == "api:openai/judge-model", "score"]) == {3.0, 7.0}   # stored as the judge wrote
    html = (out / "report.html").read_text()
    assert "Judge templates and scales" in html and "mt-bench-single single-v1" in html
    assert "grades reflected (1 + 10 - grade)" in html
    # the validity card names the template and the scale it was measured with
    r = CliRunner().invoke(app, ["card", "--judge", "api:openai/judge-model", "--from", str(out),
                                 "--out", str(tmp_path / "card")])
    assert r.exit_code == 0, r.output
    line = (f"Measured with template mt-bench-single single-v1 (sha256 {j['template']['sha256']}); scale 1-10, a "
            "higher grade is better; τ is on the reflected grade.")
    assert line in (tmp_path / "card" / "card.md").read_text()
    assert line in (tmp_path / "card" / "card.html").read_text()


def test_a_pass_fail_template_is_one_operating_point(tmp_path, fake_server, probe_file, construct_texts):
    template = tmp_path / "pf.yaml"
    template.write_text("""\
name: pass-fail-check
version: "1"
form: graded
scale: pass_fail
source: an in-house rubric
user: |-
  Evidence: {{ evidence }}
  Claim: {{ text }}
  Does the claim stay within the evidence? Answer PASS or FAIL.
parser: pass/fail
""")

    def respond(prompt: str) -> str:
        claim = prompt.split("Claim: ", 1)[1].rsplit("\nDoes the claim", 1)[0]
        return "FAIL - it claims more than the trial showed." if claim in construct_texts else "PASS"

    srv = fake_server(responder=respond)
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["validity", "run", "--judge", "api:openai/judge-model", "--template", str(template),
                                 "--api-base", srv.base_url, "--probes", str(probe_file), "--bootstrap", "100",
                                 "--regrade", "0", "--out", str(out)])
    assert r.exit_code == 0, r.output
    j = json.loads((out / "result.json").read_text())["judges"]["api:openai/judge-model"]
    assert j["scale"]["label"] == "pass/fail" and j["scale"]["binary"] and j["scale"]["operating_points"] == 1
    assert "single operating point" in j["scale"]["note"]
    assert (j["S"], j["R"]) == (1.0, 1.0) and len(j["frontier"]) == 3
    assert "single operating point, not a frontier" in (out / "report.html").read_text()


def test_arena_hard_five_way_reply_in_a_cap_run(tmp_path, fake_server):
    """The Arena-Hard grader choosing the longer answer (A on equal lengths, as reference:length does): [[A>B]]
    (A, strength 1) or [[B>>A]] (B, strength 2). Its CAP profile equals the length reference judge's."""
    a_re = re.compile(r"<\|The Start of Assistant A's Answer\|>\n(.*?)\n<\|The End of Assistant A's Answer\|>", re.S)
    b_re = re.compile(r"<\|The Start of Assistant B's Answer\|>\n(.*?)\n<\|The End of Assistant B's Answer\|>", re.S)

    def respond(prompt: str) -> str:
        a, b = a_re.search(prompt).group(1), b_re.search(prompt).group(1)
        return "Assistant A is slightly better: [[A>B]]" if len(a) >= len(b) else "My final verdict is: [[B>>A]]"

    srv = fake_server(responder=respond)
    out = tmp_path / "cap"
    store = tmp_path / "calls.sqlite"
    r = CliRunner().invoke(app, ["cap", "run", "--set", f"judgebench:{DATA / 'judgebench_fixture'}", "--judge",
                                 "api:openai/judge-model", "--judge", "reference:length", "--template", "arena-hard-pair",
                                 "--api-base", srv.base_url, "--bootstrap", "50", "--store", str(store),
                                 "--out", str(out)])
    assert r.exit_code == 0, r.output
    with CallStore(store) as s:
        v = s.frame(judge_id="api:openai/judge-model")
    strength = v["meta"].map(lambda m: (m or {}).get("strength"))
    assert set(zip(v["choice"], strength)) == {("A", 1), ("B", 2)} and v["parse_ok"].all()
    res = json.loads((out / "result.json").read_text())
    judges = res["sets"]["judgebench"]["judges"]
    assert judges["api:openai/judge-model"]["template"]["name"] == "arena-hard-pair"
    assert judges["reference:length"].get("template") is None
    for k in ("value", "strict", "consistency"):
        mine, ref = judges["api:openai/judge-model"]["conditions"]["C7"], judges["reference:length"]["conditions"]["C7"]
        assert (mine[k]["value"] if isinstance(mine[k], dict) else mine[k]) == \
            (ref[k]["value"] if isinstance(ref[k], dict) else ref[k])


def test_geval_score_is_probability_weighted_where_logprobs_are_returned(fake_server):
    """G-Eval's form: the grade is sum_s p(s)·s over the scale at the grade's token (0.6·4 + 0.4·5 = 4.4); a
    template that reads the parsed grade (MT-Bench) asks for no log-probabilities and keeps 4."""
    from fakeserver import chat_logprobs

    reply = "Coherence is good.\nScore (1-5): 4"
    srv = fake_server(responder=lambda prompt: reply,
                      logprobs=lambda text: chat_logprobs(text, {4: 0.6, 5: 0.4}, score_at=text.rindex("4")))
    r = JudgeRequest(request_id="g1", text="The trial lowered blood pressure.", evidence="A trial of 40 adults.")
    v = asyncio.run(make_judge("api:openai/judge-model", api_base=srv.base_url, template="geval").judge_one(r))
    assert v.parse_ok and v.score_source == "logprobs" and v.score == pytest.approx(4.4)
    assert v.score_dist == pytest.approx([0.0, 0.0, 0.0, 0.6, 0.4])
    assert srv.requests[-1]["logprobs"] is True
    srv.responder = lambda prompt: "Fine.\n\nRating: [[4]]"
    v = asyncio.run(make_judge("api:openai/judge-model", api_base=srv.base_url, template="mt-bench-single")
                    .judge_one(r.model_copy(update={"prompt": "Summarise the trial."})))
    assert v.score == 4.0 and v.score_source == "parsed" and "logprobs" not in srv.requests[-1]
