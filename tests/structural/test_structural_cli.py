"""The structural: spec, the segmenter, and the CLI: judge then certificate verify (and a tampered file)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.judges import make_judge, registered
from judgeaudit.structural.segment import sentence_spans, sentences


def test_splitter_rules():
    text = ('Dr. Smith went to the U.S. Army in 1990. He paid $3.5 million! Did J. Doe agree? "Yes." '
            "The 19th century.First for Women is new.\nLine two")
    assert sentences(text) == ["Dr. Smith went to the U.S. Army in 1990.", "He paid $3.5 million!",
                               "Did J. Doe agree?", '"Yes."', "The 19th century.", "First for Women is new.",
                               "Line two"]
    assert all(text[s:e] == t for (s, e), t in zip(sentence_spans(text), sentences(text), strict=True))
    assert sentences(None) == [] and sentences(" \n ") == [] and sentences("no stop") == ["no stop"]


def test_spec_options_and_fingerprint():
    assert "structural" in registered()
    j = make_judge("structural:lexical?top_k=5&tau_s=0.6&tau_c=0.4&specificity=0")
    assert (j.params.top_k, j.params.tau_s, j.params.tau_c, j.params.specificity) == (5, 0.6, 0.4, False)
    assert j.spec.model == "lexical" and j.id == "structural:lexical?top_k=5&tau_s=0.6&tau_c=0.4&specificity=0"
    a, b = make_judge("structural:lexical"), make_judge("structural:lexical?tau_s=0.7")
    assert a.spec.fingerprint() != b.spec.fingerprint()
    assert make_judge("structural:lexical", tau_s=0.7).params.tau_s == 0.7     # keyword options too


@pytest.mark.parametrize("spec, field", [("structural:", "judge"), ("structural:lexical?tau_s=2", "tau_s"),
                                         ("structural:lexical?top_k=x", "top_k"),
                                         ("structural:lexical?bogus=1", "bogus"), ("structural:nope", "judge")])
def test_bad_specs_are_input_errors(spec, field):
    with pytest.raises(InputError) as e:
        make_judge(spec)
    assert e.value.field == field


ITEMS = [
    {"item_id": "a", "text": "The tower is 300 metres tall. It was built in 1889.",
     "evidence": "The Eiffel tower is 330 metres tall. It was built in 1889 in Paris.",
     "units": ["Say when the tower was built."]},
    {"item_id": "b", "text": "It was built in 1889.", "evidence": "It was built in 1889 in Paris."},
]


def _run(argv):
    r = CliRunner().invoke(app, [str(a) for a in argv])
    if isinstance(r.exception, InputError):
        return 2, r.output + str(r.exception)
    return r.exit_code, r.output


def test_judge_then_verify_and_a_tampered_certificate_is_rejected(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(o) + "\n" for o in ITEMS))
    rc, out = _run(["judge", "--judge", "structural:lexical?top_k=1", "--form", "defects", "--input", items,
                    "--out", tmp_path / "out"])
    assert rc == 0, out
    rows = [json.loads(x) for x in (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()]
    # the requirement's content words {say, tower, built}: the claims hold at most 1 of 3 < tau_s
    assert [[d["unit_id"] for d in (r["defects"] or [])] for r in rows] == [["claim:0", "requirement:0"], []]
    cert = rows[0]["defects"][0]["certificate"]
    assert cert["type"] == "contradicted_claim" and cert["pairs"][0]["probs"] == [0.0, 0.0, 1.0]
    for src in (["--verdicts", tmp_path / "out" / "verdicts.parquet"], ["--verdicts", tmp_path / "out" / "verdicts.jsonl"],
                ["--store", tmp_path / "out" / "calls.sqlite"]):
        rc, out = _run(["certificate", "verify", *src])
        assert rc == 0 and "2 of 2 certificates verified" in out, out
    cert["pairs"][0]["premise"]["text"] = "The Eiffel tower is 300 metres tall."      # tamper with the evidence
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rc, out = _run(["certificate", "verify", "--verdicts", bad])
    assert rc == 1
    assert "REJECTED request a" in out and "defect 0 [claim:0, contradicted_claim]" in out
    assert "recomputed [1.0, 0.0, 0.0]" in out and "1 of 2 certificates verified" in out


@pytest.mark.parametrize("form, field, expected", [("label", "label", [True, False]),
                                                   ("sentences", "unit_labels", [[True, False], [False]])])
def test_label_and_sentence_forms_from_the_cli(tmp_path, form, field, expected):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({k: v for k, v in o.items() if k != "units"}) + "\n" for o in ITEMS))
    rc, out = _run(["judge", "--judge", "structural:lexical", "--form", form, "--input", items, "--out", tmp_path / "o"])
    assert rc == 0, out
    rows = [json.loads(x) for x in (tmp_path / "o" / "verdicts.jsonl").read_text().splitlines()]
    assert [r[field] for r in rows] == expected


def test_units_must_be_a_list_of_strings(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"item_id": "a", "text": "x", "units": "not a list"}) + "\n")
    rc, out = _run(["judge", "--judge", "structural:lexical", "--form", "label", "--input", items, "--out", tmp_path / "o"])
    assert rc == 2 and "items.jsonl:1: field 'units': must be a list of non-empty strings" in out
    rc, out = _run(["certificate", "verify"])
    assert rc == 2 and "exactly one of --verdicts or --store" in out


def test_cache_option_keeps_pairs_in_the_store_file(tmp_path):
    import asyncio

    from judgeaudit.records import JudgeRequest
    from judgeaudit.structural.nli import NLIPairCache

    db = tmp_path / "calls.sqlite"
    j = make_judge(f"structural:lexical?cache={db}&specificity=0")
    v = asyncio.run(j.judge_one(JudgeRequest(request_id="a", form="label", text="It was built in 1889. It is red.",
                                             evidence="It was built in 1889 in Paris.")))
    j.close()
    assert v.label is True and make_judge("structural:lexical?specificity=0").spec.fingerprint() == j.spec.fingerprint()
    cache = NLIPairCache(db)
    assert len(cache) == 2          # one world sentence x two claims
    cache.close()


def test_the_lexical_backend_is_reported_weak_wherever_it_is_reported(tmp_path):
    from judgeaudit.report.world import calibration_table
    from judgeaudit.structural.nli import lexical_probs

    # bag-of-words coverage: a swapped relation is "entailed", a true paraphrase is not
    assert lexical_probs("Bob hired Alice.", "Alice hired Bob.")[0] == 1.0
    assert lexical_probs("Bob hired Alice.", "Alice was taken on by Bob.")[0] == pytest.approx(2 / 3)   # < tau_s
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(o) + "\n" for o in ITEMS))
    rc, out = _run(["judge", "--judge", "structural:lexical", "--form", "defects", "--input", items,
                    "--out", tmp_path / "out"])
    assert rc == 0, out
    rows = [json.loads(x) for x in (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()]
    certs = [d["certificate"] for r in rows for d in (r["defects"] or [])]
    assert certs and all(c["weak_backend"] is True for c in certs)
    assert all(r["meta"]["weak_backend"] is True for r in rows)
    # the thresholds were chosen with it: the record and the report's table say so
    cal = make_judge("structural:lexical").calibration()
    assert cal["weak_backend"] is True and cal["dev_split"]["weak_backend"] is True
    table = calibration_table({"structural:lexical": cal})
    assert table["chosen on"].iloc[0].endswith("lexical backend (weak)") and bool(table["weak backend"].iloc[0])


def test_unreadable_nli_replies_are_failed_calls_and_null_probabilities_never_verify(tmp_path, fake_server,
                                                                                    monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")     # the fake server ignores it
    srv = fake_server(responder=lambda prompt: "I cannot tell from this.")   # names no NLI label
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(o) + "\n" for o in ITEMS))
    rc, out = _run(["judge", "--judge", "structural:api:openai/fake-nli", "--api-base", srv.base_url,
                    "--form", "defects", "--input", items, "--out", tmp_path / "api", "--retries", "0"])
    assert rc == 1 and "produced no usable verdict" in out, out
    rows = [json.loads(x) for x in (tmp_path / "api" / "verdicts.jsonl").read_text().splitlines()]
    assert [(r["parse_ok"], r["defects"]) for r in rows] == [(False, None), (False, None)]
    assert all("no probability" in r["error"] for r in rows)
    # certificates whose probabilities are null (as such a run used to write) are rejected, also when the
    # verifier's backend is as unreadable again
    rc, out = _run(["judge", "--judge", "structural:lexical?top_k=1", "--form", "defects", "--input", items,
                    "--out", tmp_path / "lex"])
    assert rc == 0, out
    rows = [json.loads(x) for x in (tmp_path / "lex" / "verdicts.jsonl").read_text().splitlines()]
    for d in rows[0]["defects"]:
        d["certificate"]["backend"] = "api:openai/fake-nli"
        for p in d["certificate"]["pairs"]:
            p["probs"] = [None, None, None]
    nulls = tmp_path / "nulls.jsonl"
    nulls.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rc, out = _run(["certificate", "verify", "--verdicts", nulls, "--api-base", srv.base_url])
    assert rc == 1 and "0 of 2 certificates verified" in out, out
    assert "records no probability" in out


@pytest.mark.parametrize("cell, why", [
    ("[{\"span\": \"x\", ", "defects is not a JSON list"),              # cut-off JSON text
    ([1, 2], "defect 0 is not a JSON object"),
    ({"span": "x", "reason": "y"}, "defects is not a JSON list"),
    ([{"span": "x", "reason": "y", "certificate": "{broken"}], "defect 0's certificate is not a JSON object"),
    ([{"span": "x", "reason": "y", "certificate": [1, 2]}], "defect 0's certificate is not a JSON object"),
])
def test_a_malformed_defects_cell_is_one_line_naming_file_row_and_field(tmp_path, cell, why):
    good = {"request_id": "a", "judge_id": "structural:lexical", "defects": []}
    bad = tmp_path / "verdicts.jsonl"
    bad.write_text(json.dumps(good) + "\n" + json.dumps({**good, "request_id": "b", "defects": cell}) + "\n")
    rc, out = _run(["certificate", "verify", "--verdicts", bad])
    assert rc == 2, out
    assert f"verdicts.jsonl:2: field 'defects': request 'b': {why}" in out


def test_an_api_nli_backend_at_an_api_base_needs_no_key(tmp_path, fake_server, monkeypatch, cli_main):
    """structural:api: with --api-base reaches a self-hosted server without a key, as api: does (the same
    transport): no 'Missing credentials' refusal, every pair answered."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    srv = fake_server(responder=lambda prompt: "entailment")
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(o) + "\n" for o in ITEMS))
    r = cli_main("judge", "--judge", "structural:api:openai/fake-nli", "--api-base", srv.base_url, "--form",
                 "label", "--input", items, "--out", tmp_path / "out", "--retries", "0")
    assert r.returncode == 0, r.stderr
    assert "credentials" not in r.stderr.lower()
    rows = [json.loads(x) for x in (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()]
    assert [(row["error"], row["parse_ok"]) for row in rows] == [(None, True), (None, True)]
    assert len(srv.requests) > 0 and set(srv.auth_headers) == {""}     # sent, and with no key
