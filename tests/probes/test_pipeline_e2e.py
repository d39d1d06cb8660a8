"""Protocol 1 end to end through the CLI (construct-validity.txt §4.2; issue deliverable 5):
build (generator and verifier served by the local OpenAI-compatible test server, through the
``api`` backend) → blinded annotation (three scripted annotators on the app) → export → merge →
agreement. No network."""

from __future__ import annotations

import json
import re

from fastapi.testclient import TestClient
from scripted_judges import _GEN, _VER
from typer.testing import CliRunner

from judgeaudit.analyses.validity import validity_profile
from judgeaudit.cli import app   # the whole command line: it records what each command wrote
from judgeaudit.judges import make_judge
from judgeaudit.probes.design import graded_requests
from judgeaudit.records import probes_frame, verdicts_frame
from judgeaudit.runtime.executor import run
from judgeaudit.probes.annotate.app import create_app
from judgeaudit.probes import gates
from judgeaudit.probes.io import bundled_probes_path, read_probes
from judgeaudit.probes.taxonomy import SLOT_BY_NAME, axis_of

BASES = ("geo-01a", "geo-02a", "geo-03a")
runner = CliRunner()


def _bundled():
    return [p for p in read_probes(bundled_probes_path()) if p.base_id in BASES]


def _responder(probes):
    edits = {(p.original, p.slot): p.edited for p in probes}
    slot_of = {(p.original, p.edited): p.slot for p in probes}

    def respond(prompt: str) -> str:
        m = _VER.search(prompt)
        if m:           # the verifier
            slot = slot_of[(m["original"], m["edited"])]
            named = "quantifier_strengthening" if slot == "tense_modality_shift" else slot
            return json.dumps({"facts_identical": True, "anchor_free_both": True, "register_comparable": True,
                               "slot_changed": named,
                               "scope_relation": "wider" if axis_of(slot) == "scope" else "same",
                               "second_claims_more": axis_of(slot) == "scope"})
        m = _GEN.search(prompt)
        return json.dumps({"edited": edits[(m["claim"], m["slot"])]})

    return respond


def test_three_stage_run_on_bundled_probes(tmp_path, fake_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")
    probes = _bundled()
    srv = fake_server(responder=_responder(probes))
    bases = tmp_path / "bases.jsonl"
    seen = set()
    with bases.open("w") as fh:
        for p in probes:
            if p.base_id not in seen:
                seen.add(p.base_id)
                fh.write(json.dumps({"claim": p.original, "evidence": p.evidence, "group": p.group,
                                     "domain": p.domain, "base_id": p.base_id}) + "\n")
    out = tmp_path / "build"
    r = runner.invoke(app, ["probes", "build", "--bases", str(bases), "--generator", "api:openai/acme-gen",
                            "--verifier", "api:openai/beta-ver", "--generator-family", "acme",
                            "--verifier-family", "beta", "--audited-family", "gemma", "--out", str(out),
                            "--api-base", srv.base_url, "--no-progress", "--concurrency", "4"])
    assert r.exit_code == 0, r.output + repr(r.exception)
    assert "Per-slot yield" in r.output
    print(r.output)
    built = read_probes(out / "probes.jsonl")
    summary = json.loads((out / "build.json").read_text())
    yields = {row["slot"]: row for row in summary["yield"]}
    # every (base, slot) was requested; the outcome of each is what the gates say of the bundled edit
    expected = {}
    for p in probes:
        if gates.length_gate(p.original, p.edited, 0.10):
            expected[(p.base_id, p.slot)] = gates.LENGTH
        elif gates.epistemic_marker_gate(p.original, p.edited, p.slot):
            expected[(p.base_id, p.slot)] = gates.EPISTEMIC_MARKER
        elif p.slot == "tense_modality_shift":          # the scripted verifier names the wrong slot
            expected[(p.base_id, p.slot)] = gates.WRONG_SLOT
    assert yields["all"]["requested"] == 3 * 12
    assert yields["tense_modality_shift"]["accepted"] == 0
    rej = [json.loads(x) for x in (out / "rejections.jsonl").read_text().splitlines()]
    assert {(x["base_id"], x["slot"]): x["reason"] for x in rej} == expected
    assert len(built) == yields["all"]["accepted"] == 36 - len(expected) > 12
    notices = {n["axis"]: n for n in summary["verifier_notices"]}
    assert notices["scope"]["notice_rate"] == 1.0 and notices["strength"]["notice_rate"] == 0.0
    # the audited family "gemma" is the vendor family of the table
    assert summary["families"] == {"generator": "acme", "verifier": "beta", "audited": ["google"],
                                   "override": False, "violations": []}
    # a rerun reads the call store and pays nothing twice
    n_calls = len(srv.requests)
    r = runner.invoke(app, ["probes", "build", "--bases", str(bases), "--generator", "api:openai/acme-gen",
                            "--verifier", "api:openai/beta-ver", "--generator-family", "acme",
                            "--verifier-family", "beta", "--audited-family", "gemma", "--out", str(out),
                            "--api-base", srv.base_url, "--no-progress"])
    assert r.exit_code == 0 and len(srv.requests) == n_calls
    # one family for generator and verifier is refused without the override
    r = runner.invoke(app, ["probes", "build", "--bases", str(bases), "--generator", "api:openai/acme-gen",
                            "--verifier", "api:openai/acme-ver", "--generator-family", "acme",
                            "--verifier-family", "acme", "--audited-family", "gemma", "--out", str(tmp_path / "x"),
                            "--api-base", srv.base_url, "--no-progress"])
    assert r.exit_code != 0 and "three disjoint model families" in str(r.exception)

    # stage 3: blinded annotation by three scripted annotators
    db = tmp_path / "study.sqlite"
    r = runner.invoke(app, ["probes", "annotate", "init", "--probes", str(out / "probes.jsonl"), "--annotators", "3",
                            "--db", str(db), "--seed", "1"])
    assert r.exit_code == 0, r.output
    tokens = dict(re.findall(r"(a\d): http://127\.0\.0\.1:8765/#t=(\S+)", r.output))
    assert set(tokens) == {"a1", "a2", "a3"}
    truth = {(p.original, p.edited): p for p in built}
    client = TestClient(create_app(db))
    for ann, tok in tokens.items():
        hdr = {"Authorization": f"Bearer {tok}"}
        for pos in range(1, len(built) + 1):
            d = client.get(f"/api/items/{pos}", headers=hdr).json()
            p = truth.get((d["a"], d["b"])) or truth[(d["b"], d["a"])]
            edited_side = "A" if d["a"] == p.edited else "B"
            construct = SLOT_BY_NAME[p.slot].is_construct
            body = {"answer": "neither", "same_facts": True}
            if construct and not (ann == "a3" and p.slot == "hedging_removal"):
                body = {"answer": edited_side, "basis": p.edited[:40], "same_facts": True}
            if not construct and ann == "a3" and p.slot == "elaboration":
                body = {"answer": edited_side, "basis": p.edited[-30:], "same_facts": True}
            if ann == "a2" and p.slot == "elaboration":
                body = {"answer": "cannot_tell", "same_facts": False}
            resp = client.put(f"/api/items/{pos}/answer", headers=hdr, json=body)
            assert resp.status_code == 200, resp.text
    answers = tmp_path / "answers.jsonl"
    r = runner.invoke(app, ["probes", "annotate", "export", "--db", str(db), "--out", str(answers)])
    assert r.exit_code == 0 and len(answers.read_text().splitlines()) == 3 * len(built)
    labelled = tmp_path / "labelled.jsonl"
    r = runner.invoke(app, ["probes", "merge", "--probes", str(out / "probes.jsonl"), "--answers", str(answers),
                            "--out", str(labelled)])
    assert r.exit_code == 0, r.output
    merged = {p.probe_id: p for p in read_probes(labelled)}
    assert all(p.labels is not None and len(p.labels) == 3 for p in merged.values())
    assert all(p.meta["annotators"] == ["a1", "a2", "a3"] for p in merged.values())
    r = runner.invoke(app, ["probes", "agreement", "--probes", str(labelled), "--out", str(tmp_path / "agr")])
    assert r.exit_code == 0, r.output
    agr = json.loads((tmp_path / "agr" / "agreement.json").read_text())
    per_slot = {row["slot"]: row for row in agr["per_slot"]}
    if "hedging_removal" in per_slot:
        assert per_slot["hedging_removal"]["agree"] == 1 / 3 and per_slot["hedging_removal"]["usable"] == (
            per_slot["hedging_removal"]["n"])
        assert "hedging_removal" in agr["not_measurable"]["slots"]
    if "elaboration" in per_slot:
        assert per_slot["elaboration"]["agree"] == 0.0 and per_slot["elaboration"]["all_differ"] == (
            per_slot["elaboration"]["n"])
        assert per_slot["elaboration"]["facts_differ_rate"] == 1 / 3
    assert per_slot["register_shift"]["agree"] == 1.0 and per_slot["register_shift"]["dominance_flag"]
    assert (tmp_path / "agr" / "agreement.html").read_text().count("<table") == 2
    # the validity analysis consumes the merged labels: the slot below the bar is excluded from R
    pf = probes_frame(list(merged.values()))
    verdicts = verdicts_frame(run(make_judge("reference:length"), graded_requests(pf), progress=False))
    vd = validity_profile(pf, verdicts, n_boot=0, n_perm=0).to_dict()
    assert vd["direction_source"] == "human"
    for slot in per_slot:      # a slot is excluded when it or its axis is below the bar
        assert vd["slots"][slot]["measurable"] == (slot not in agr["excluded_slots"]), slot
    if "hedging_removal" in per_slot:
        assert vd["slots"]["hedging_removal"]["n_in_arm"] == 0
    print(r.output)
