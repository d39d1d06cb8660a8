"""`judgeaudit world run` from the command line with an api judge on the local test server
(tests/fakeserver.py): a RAGTruth-format set on disk, the label and defects forms with 3 votes, and
the generous matcher as a second api judge answering yes/no (--matcher-judge) — matcher
disagreement and the permuted audit in result.json and the report; bad input as one-line errors."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError

YEARS = [("The bridge opened in 1932.", "1937"), ("The dam was finished in 1936.", "1941"),
         ("The tower was built in 1889.", "1901"), ("The canal opened in 1914.", "1920")]


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _ragtruth(tmp_path):
    """Four QA sources (their passages hold the right year) and a right and a wrong answer to each; the
    wrong year is the marked span."""
    d = tmp_path / "rt"
    d.mkdir()
    sources, responses = [], []
    for i, (right, wrong_year) in enumerate(YEARS):
        right_year = re.search(r"\d{4}", right).group()
        sources.append({"source_id": f"s{i}", "task_type": "QA", "source": "MARCO",
                        "source_info": {"question": f"question {i}?",
                                        "passages": f"passage 1: It happened in {right_year}. passage 2: Other text."}})
        wrong = right.replace(right_year, wrong_year)
        at = wrong.index(wrong_year)
        responses += [{"id": f"{i}r", "source_id": f"s{i}", "response": right, "labels": []},
                      {"id": f"{i}w", "source_id": f"s{i}", "response": wrong,
                       "labels": [{"start": at, "end": at + 4, "text": wrong_year, "label_type": "Evident Conflict"}]}]
    responses.append({"id": "cut", "source_id": "s0", "response": "The bridge", "labels": [], "quality": "truncated"})
    _jsonl(d / "source_info.jsonl", sources)
    _jsonl(d / "response.jsonl", responses)
    return d


def _block(prompt: str, name: str) -> str | None:
    m = re.search(rf"{name}:\n(.*?)\n\n", prompt, re.S)
    return m.group(1) if m else None


def responder(prompt: str) -> str:
    if "Marked segment:" in prompt:
        # a sloppy matcher: "yes" whenever the complaint's reason names a year, whichever segment is marked
        return "Yes" if re.search(r"\d{4}", _block(prompt, "Complaint reason")) else "No"
    out, src = _block(prompt, "Output"), _block(prompt, "Source material")
    bad = [y for y in re.findall(r"\d{4}", out) if src is not None and y not in src]
    if '"defects"' in prompt:
        if src is None:   # blind: one vague complaint quoting the whole answer
            return json.dumps({"defects": [{"quote": out, "reason": "cannot be verified"}]})
        # informed: names the wrong year in the reason but quotes only the first word
        return json.dumps({"defects": [{"quote": out.split()[0], "reason": f"{y} contradicts passage 1"}
                                       for y in bad]})
    return json.dumps({"defective": bool(bad)})


@pytest.fixture
def env(monkeypatch, tmp_path, fake_server):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    return _ragtruth(tmp_path), fake_server(responder=responder)


def _run(args):
    res = CliRunner().invoke(app, ["world", "run", *args])
    assert res.exit_code == 0, (res.output, res.exception)
    return res


def test_label_form_through_the_cli_with_an_api_judge(tmp_path, env):
    d, srv = env
    out = tmp_path / "label"
    _run(["--set", f"ragtruth:{d}", "--judge", "api:openai/fake-judge", "--api-base", srv.base_url,
          "--arm", "blind", "--arm", "informed", "--votes", "3", "--bootstrap", "200", "--out", str(out)])
    r = json.loads((out / "result.json").read_text())
    assert set(r) >= {"judges", "paired", "spearman", "provenance", "calls", "votes", "temperature"}
    sp = r["provenance"]["set_provenance"]
    assert sp["adapter"] == "ragtruth" and str(d / "response.jsonl") in sp["files"] and sp["n_items"] == 8
    assert sp["excluded"] == {"quality is not good": 1}
    assert "Left out by the set's adapter: quality is not good: 1" in (out / "report.html").read_text()
    arms = r["judges"]["api:openai/fake-judge"]["arms"]
    for a in arms.values():
        assert {"n", "recall", "specificity", "balanced_accuracy", "false_alarms_per_clean", "ci"} <= set(a)
        assert a["n"] == 8 and a["n_defective"] == 4 and a["parse_failures"] == 0
    assert (arms["informed"]["balanced_accuracy"], arms["blind"]["balanced_accuracy"]) == (1.0, 0.5)
    p = next(x for x in r["paired"] if x["metric"] == "balanced_accuracy")
    assert {"judge", "a", "b", "metric", "gain", "ci", "mcnemar"} <= set(p) and set(p["mcnemar"]) >= {"b", "c", "p"}
    assert (p["gain"], p["mcnemar"]["b"], p["mcnemar"]["c"]) == (0.5, 4, 0)
    assert p["mcnemar"]["p"] == pytest.approx(2 * 0.5 ** 4)
    # 8 answers × 2 arms × 3 votes, each vote one call at the vote temperature
    assert sum(srv.answered.values()) == 48 and len(srv.answered) == 16
    assert {b.get("temperature") for b in srv.requests} == {0.3}
    assert "Paired gains" in (out / "report.html").read_text()


def test_defects_form_with_a_generous_matcher_judge_through_the_cli(tmp_path, env):
    d, srv = env
    out = tmp_path / "defects"
    _run(["--set", f"ragtruth:{d}", "--judge", "api:openai/fake-judge", "--api-base", srv.base_url,
          "--arm", "blind", "--arm", "informed", "--votes", "3", "--form", "defects", "--bootstrap", "200",
          "--matcher-judge", "api:openai/fake-matcher", "--out", str(out)])
    r = json.loads((out / "result.json").read_text())
    assert r["matcher_judge"] == "api:openai/fake-matcher" and r["matcher_undecided"] == 0
    arms = r["judges"]["api:openai/fake-judge"]["arms"]
    inf, bl = arms["informed"]["spans"], arms["blind"]["spans"]
    # informed: 4 complaints quoting "The" with the wrong year in the reason. Strict (quote overlap) credits
    # none, the generous matcher all four: they disagree on all 4 complaint–segment pairs.
    assert (inf["strict"]["recall"], inf["generous"]["recall"]) == (0.0, 1.0)
    assert (inf["strict"]["precision"], inf["generous"]["precision"]) == (0.0, 1.0)
    assert inf["disagreement"] == {"pairs": 4, "differ": 4, "first_only": 0, "second_only": 4, "undecided": 0,
                                   "rate": 1.0}
    # blind: the whole answer quoted with no year in the reason: strict credits it, the generous one not
    assert (bl["strict"]["recall"], bl["generous"]["recall"]) == (1.0, 0.0)
    assert bl["disagreement"] == {"pairs": 4, "differ": 4, "first_only": 4, "second_only": 0, "undecided": 0,
                                  "rate": 1.0}
    # the permuted control: another answer's marked year. This matcher ignores the segment, so it still
    # says yes to every informed complaint (false-match rate 1); the strict matcher to none.
    assert inf["permuted_audit_generous"] == {"complaints": 4, "false_matches": 4, "undecided": 0,
                                              "false_match_rate": 1.0, "by_segment_length": {
                                                  "1": {"pairs": 4, "false_matches": 4, "rate": 1.0}}}
    assert inf["permuted_audit_strict"]["false_match_rate"] == 0.0
    assert bl["permuted_audit_generous"]["false_match_rate"] == 0.0
    # RAGTruth character overlap: informed quotes "The" (3 chars, never in a span); blind the whole answer
    assert inf["char_overlap"]["overlap_chars"] == 0 and inf["char_overlap"]["predicted_chars"] == 12
    assert bl["char_overlap"]["recall"] == 1.0
    # detection needs no matcher: informed flags exactly the wrong answers; blind flags all 8
    assert (arms["informed"]["balanced_accuracy"], arms["blind"]["balanced_accuracy"]) == (1.0, 0.5)
    assert arms["blind"]["false_alarms_per_clean"] == 1.0
    # judge calls 8 × 2 × 3; matcher calls: one per distinct (answer, complaint, segment): 4 + 4 audit pairs
    # per arm
    judge_calls = [b for b in srv.requests if "Marked segment:" not in b["messages"][-1]["content"]]
    assert len(judge_calls) == 48 and len(srv.requests) == 48 + 16
    html = (out / "report.html").read_text()
    assert "matchers differ (pairs)" in html and "4/4" in html and "generous false-match (permuted)" in html
    assert "depend on the matcher" in html


def test_bad_input_from_the_cli_names_file_line_and_field(tmp_path, env):
    d, srv = env
    lines = (d / "response.jsonl").read_text().splitlines()
    bad = json.loads(lines[1])
    bad["labels"][0]["end"] = 400                       # a span outside the text
    (d / "response.jsonl").write_text("\n".join([lines[0], json.dumps(bad), *lines[2:]]) + "\n")
    res = CliRunner().invoke(app, ["world", "run", "--set", f"ragtruth:{d}", "--judge", "reference:oracle",
                                   "--out", str(tmp_path / "o")])
    e = res.exception
    assert isinstance(e, InputError) and (e.path, e.line, e.field) == (str(d / "response.jsonl"), 2, "labels[0]")
    assert srv.requests == [] and not (tmp_path / "o" / "result.json").exists()
    # a world missing for the informed arm: a source without passages
    src = [json.loads(x) for x in (d / "source_info.jsonl").read_text().splitlines()]
    del src[2]["source_info"]["passages"]
    _jsonl(d / "source_info.jsonl", src)
    (d / "response.jsonl").write_text("\n".join(lines) + "\n")
    # it is left out with its reason and count, not an error for the whole set
    from judgeaudit.datasets.world import load_world

    n = sum(json.loads(x)["source_id"] == src[2]["source_id"] for x in lines)
    ws = load_world(f"ragtruth:{d}")
    assert n and ws.provenance["excluded"]["the world (source_info) is missing or empty"] == n
    assert len(ws) == len(lines) - sum(ws.provenance["excluded"].values())


def test_matcher_judge_with_the_label_form_is_refused_before_any_call(tmp_path, env):
    d, srv = env
    res = CliRunner().invoke(app, ["world", "run", "--set", f"ragtruth:{d}", "--judge", "api:openai/fake-judge",
                                   "--api-base", srv.base_url, "--form", "label", "--matcher-judge",
                                   "api:openai/fake-matcher", "--out", str(tmp_path / "o")])
    assert isinstance(res.exception, InputError) and res.exception.field == "--matcher-judge"
    assert srv.requests == []


def _undecided(prompt: str) -> str:
    return "It depends." if "Marked segment:" in prompt else responder(prompt)


def test_a_matcher_that_never_decides_fails_the_run_unless_allowed(tmp_path, monkeypatch, fake_server):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    d, srv = _ragtruth(tmp_path), fake_server(responder=_undecided)
    args = ["world", "run", "--set", f"ragtruth:{d}", "--judge", "api:openai/fake-judge", "--api-base",
            srv.base_url, "--votes", "1", "--form", "defects", "--bootstrap", "50", "--matcher-judge",
            "api:openai/fake-matcher"]
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "o")])
    assert res.exit_code == 1 and "decided none of its 16 pairs" in res.output
    r = json.loads((tmp_path / "o" / "result.json").read_text())     # written, nothing computed lost
    assert (r["matcher_pairs"], r["matcher_undecided"]) == (16, 16)
    inf = r["judges"]["api:openai/fake-judge"]["arms"]["informed"]
    assert inf["spans"]["generous"]["recall"] is None and inf["spans"]["generous"]["undecided_segments"] == 4
    assert inf["matched"]["segment:generous"]["recall"] is None
    assert inf["spans"]["strict"]["recall"] == 0.0                       # the strict route did decide
    res = CliRunner().invoke(app, [*args, "--allow-failures", "--out", str(tmp_path / "o2")])
    assert res.exit_code == 0 and "kept going (--allow-failures)" in res.output


def test_a_second_matcher_re_matches_the_pairs_with_agreement_and_kappa(tmp_path, env):
    d, srv = env
    out = tmp_path / "o"
    _run(["--set", f"ragtruth:{d}", "--judge", "api:openai/fake-judge", "--api-base", srv.base_url, "--votes", "1",
          "--form", "defects", "--bootstrap", "50", "--matcher-judge", "api:openai/fake-matcher",
          "--second-matcher-judge", "api:openai/fake-matcher-2", "--out", str(out)])
    r = json.loads(out.joinpath("result.json").read_text())
    for arm, credits in (("informed", 1.0), ("blind", 0.0)):
        ag = r["judges"]["api:openai/fake-judge"]["arms"][arm]["spans"]["second_matcher_agreement"]
        # the same responder answers both matchers: full agreement; κ is 0 when one class only (App. A.3)
        assert (ag["pairs"], ag["decided"], ag["agreement"], ag["first_credits"], ag["second_credits"]) == (
            4, 4, 1.0, credits, credits)
        assert ag["kappa"] == 0.0
    html = (out / "report.html").read_text()
    assert "second matcher agrees" in html and "Cohen's κ" in html.replace("&#x27;", "'")
