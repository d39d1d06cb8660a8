"""Provider batch files: ``--batch openai|anthropic`` writes every missing call of a command to the provider's
request file (no call made); ``judgeaudit batch ingest`` reads the provider's results into the store; the
rerun is served from the store with the keys and verdicts an online run gives. Results files are written
here in each provider's documented output format (succeeded, errored, canceled, expired, error statuses,
partial files)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner
from world_fixtures import use_tiny_world

from judgeaudit.cli import app
from judgeaudit.errors import InputError
from judgeaudit.interop.batch import ANTHROPIC_MAX_REQUESTS, BatchWriter, anthropic_params, ingest, read_results
from judgeaudit.runtime.store import CallStore

N_CALLS = 8 * 2          # tiny_items: 8 items × 2 arms (blind, informed), one vote each
COMPARED = ("call_key", "request_id", "judge_id", "model", "family", "form", "epoch", "raw", "score", "score_dist",
            "score_source", "choice", "rationale", "label", "unit_labels", "defect_ids", "parse_ok", "error",
            "input_tokens", "output_tokens", "provider")


def label_reply(prompt: str) -> str:
    """The fake judge: a deterministic label per prompt."""
    return '{"defective": %s}' % ("true" if int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 3 else "false")


@pytest.fixture(autouse=True)
def tiny_world(monkeypatch):
    use_tiny_world(monkeypatch)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def world(out: Path, store: Path, judge: str, *extra: str) -> list[str]:
    return ["world", "run", "--set", "tiny:x", "--judge", judge, "--votes", "1", "--bootstrap", "0",
            "--permutations", "0", "--out", str(out), "--store", str(store), *extra]


def invoke(argv: list[str]):
    r = CliRunner().invoke(app, argv)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r


def stored(store: Path) -> dict[str, dict]:
    with CallStore(store, readonly=True) as cs:
        df = cs.frame(status="ok")
    rows = {}
    for rec in df.to_dict("records"):
        meta = {k: v for k, v in (rec["meta"] or {}).items() if not k.startswith("batch")}
        rows[rec["call_key"]] = {**{c: rec[c] for c in COMPARED}, "meta": meta}
    return rows


def openai_requests(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def openai_answer(srv, req: dict, text: str | None = None) -> dict:
    """The output-file line OpenAI writes for one request answered with the fake server's reply."""
    body = req["body"]
    text = label_reply(body["messages"][0]["content"]) if text is None else text
    return {"id": f"batch_req_{req['custom_id'][:8]}", "custom_id": req["custom_id"],
            "response": {"status_code": 200, "request_id": f"req_{req['custom_id'][:8]}",
                         "body": srv._completion(body, text)}, "error": None}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# ------------------------------------------------------------------------------------------- OpenAI, end to end


def test_openai_batch_round_trip_gives_the_online_keys_and_verdicts_with_no_call(tmp_path, fake_server):
    srv = fake_server(responder=label_reply)
    judge = "api:openai/fake-model"
    base = ["--api-base", srv.base_url]
    # online: the reference verdicts
    r = invoke(world(tmp_path / "a", tmp_path / "a.sqlite", judge, *base))
    assert r.exit_code == 0, r.output
    online = stored(tmp_path / "a.sqlite")
    assert len(online) == N_CALLS and len(srv.requests) == N_CALLS
    served = len(srv.requests)

    # --batch: a request file, no call, no output folder
    r = invoke(world(tmp_path / "b", tmp_path / "b.sqlite", judge, *base, "--batch", "openai", "--batch-out",
                     str(tmp_path / "batch.jsonl")))
    assert r.exit_code == 0, r.output
    assert len(srv.requests) == served                               # no call was made
    assert not (tmp_path / "b" / "result.json").exists()
    reqs = openai_requests(tmp_path / "batch.jsonl")
    assert {q["custom_id"] for q in reqs} == set(online)             # one request per call, keyed by call key
    assert all(q["method"] == "POST" and q["url"] == "/v1/chat/completions" for q in reqs)
    sent = {srv.prompt_hash(b["messages"][0]["content"]): b for b in srv.requests}
    for q in reqs:                                                   # the body the judge sends online
        online_body = sent[srv.prompt_hash(q["body"]["messages"][0]["content"])]
        assert q["body"] == online_body

    # answer it in OpenAI's output format, ingest, rerun: served from the store
    results = write_jsonl(tmp_path / "output.jsonl", [openai_answer(srv, q) for q in reversed(reqs)])
    r = invoke(["batch", "ingest", str(results), "--store", str(tmp_path / "b.sqlite")])
    assert r.exit_code == 0, r.output
    assert f"{N_CALLS} answers stored" in r.output
    r = invoke(world(tmp_path / "b", tmp_path / "b.sqlite", judge, *base))
    assert r.exit_code == 0, r.output
    assert len(srv.requests) == served                               # zero server calls on the rerun
    assert stored(tmp_path / "b.sqlite") == online                   # identical keys and verdicts
    ra = json.loads((tmp_path / "a" / "result.json").read_text())
    rb = json.loads((tmp_path / "b" / "result.json").read_text())
    assert ra["judges"] == rb["judges"] and ra["paired"] == rb["paired"]   # the same analysis from the same verdicts


def test_failed_expired_and_absent_entries_stay_missing_and_are_batched_or_called_again(tmp_path, fake_server):
    srv = fake_server(responder=label_reply)
    judge, base = "api:openai/fake-model", ["--api-base", srv.base_url]
    store = tmp_path / "s.sqlite"
    r = invoke(world(tmp_path / "o", store, judge, *base, "--batch", "openai", "--batch-out", str(tmp_path / "b.jsonl")))
    assert r.exit_code == 0, r.output
    reqs = openai_requests(tmp_path / "b.jsonl")
    ok, errored, status500, absent = reqs[:10], reqs[10:12], reqs[12:14], reqs[14:]
    lines = [openai_answer(srv, q) for q in ok]
    lines += [{"id": "batch_req_e", "custom_id": q["custom_id"], "response": None,
               "error": {"code": "batch_expired", "message": "This request could not be executed before the "
                                                              "completion window expired."}} for q in errored]
    lines += [{"id": "batch_req_s", "custom_id": q["custom_id"],
               "response": {"status_code": 500, "request_id": "req_s",
                            "body": {"error": {"message": "server error", "type": "server_error"}}},
               "error": None} for q in status500]
    r = invoke(["batch", "ingest", str(write_jsonl(tmp_path / "out.jsonl", lines)), "--store", str(store)])
    assert r.exit_code == 0, r.output
    assert "10 answers stored" in r.output and "4 failed" in r.output
    # ingesting again changes nothing
    r = invoke(["batch", "ingest", str(tmp_path / "out.jsonl"), "--store", str(store)])
    assert "0 answers stored, 10 already in the store" in r.output
    # the next --batch run writes exactly the calls still missing
    r = invoke(world(tmp_path / "o", store, judge, *base, "--batch", "openai", "--batch-out", str(tmp_path / "b2.jsonl")))
    again = {q["custom_id"] for q in openai_requests(tmp_path / "b2.jsonl")}
    assert again == {q["custom_id"] for q in errored + status500 + absent}
    # and an online run calls exactly those
    r = invoke(world(tmp_path / "o", store, judge, *base))
    assert r.exit_code == 0, r.output
    assert len(srv.requests) == len(again) == 6


def test_nothing_missing_writes_no_batch_file(tmp_path, fake_server):
    srv = fake_server(responder=label_reply)
    judge, base, store = "api:openai/fake-model", ["--api-base", srv.base_url], tmp_path / "s.sqlite"
    assert invoke(world(tmp_path / "o", store, judge, *base)).exit_code == 0
    r = invoke(world(tmp_path / "o", store, judge, *base, "--batch", "openai", "--batch-out", str(tmp_path / "b.jsonl")))
    assert r.exit_code == 0 and "no api: judge call is missing from the store" in r.output
    assert not (tmp_path / "b.jsonl").exists()


def test_reference_judges_run_as_usual_beside_a_batched_api_judge(tmp_path, fake_server):
    srv = fake_server(responder=label_reply)
    store = tmp_path / "s.sqlite"
    argv = world(tmp_path / "o", store, "api:openai/fake-model", "--api-base", srv.base_url, "--judge",
                 "reference:constant", "--batch", "openai", "--batch-out", str(tmp_path / "b.jsonl"))
    r = invoke(argv)
    assert r.exit_code == 0, r.output
    assert len(openai_requests(tmp_path / "b.jsonl")) == N_CALLS and srv.requests == []


# ------------------------------------------------------------------------------------------------ Anthropic


def anthropic_requests(path: Path) -> list[dict]:
    doc = json.loads(path.read_text())
    return doc["requests"]


def anthropic_answer(req: dict, kind: str = "succeeded") -> dict:
    """A line of Anthropic's Message Batch results JSONL."""
    if kind == "succeeded":
        text = label_reply(req["params"]["messages"][0]["content"])
        return {"custom_id": req["custom_id"], "result": {"type": "succeeded", "message": {
            "id": f"msg_{req['custom_id'][:8]}", "type": "message", "role": "assistant",
            "model": req["params"]["model"], "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 120, "output_tokens": 6}}}}
    if kind == "errored":
        return {"custom_id": req["custom_id"], "result": {"type": "errored", "error": {
            "type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}}}
    return {"custom_id": req["custom_id"], "result": {"type": kind}}


def test_anthropic_batch_requests_results_and_rerun_from_the_store(tmp_path):
    judge, store = "api:anthropic/claude-3-5-haiku-20241022", tmp_path / "s.sqlite"
    out = tmp_path / "b.json"
    r = invoke(world(tmp_path / "o", store, judge, "--batch", "anthropic", "--batch-out", str(out)))
    assert r.exit_code == 0, r.output
    reqs = anthropic_requests(out)
    assert len(reqs) == N_CALLS
    for q in reqs:
        assert len(q["custom_id"]) <= 64 and set(q["custom_id"]) <= set("0123456789abcdef")
        p = q["params"]
        assert p["model"] == "claude-3-5-haiku-20241022" and p["max_tokens"] > 0
        assert p["messages"][0]["role"] == "user" and "temperature" in p
        assert not {"logprobs", "top_logprobs", "seed"} & set(p)
    kinds = ["succeeded"] * 12 + ["errored", "canceled", "expired"]   # and one absent (a partial file)
    lines = [anthropic_answer(q, k) for q, k in zip(reqs, kinds, strict=False)]
    r = invoke(["batch", "ingest", str(write_jsonl(tmp_path / "res.jsonl", lines)), "--store", str(store)])
    assert r.exit_code == 0, r.output
    assert "12 answers stored" in r.output
    assert "1 canceled, 1 errored, 1 expired" in r.output and "invalid_request_error: prompt is too long" in r.output
    got = stored(store)
    for q in reqs[:12]:
        v = got[q["custom_id"]]
        assert v["label"] is (label_reply(q["params"]["messages"][0]["content"]) == '{"defective": true}')
        assert (v["input_tokens"], v["output_tokens"], v["provider"]) == (120, 6, "anthropic")
    # the rest are batched again, then answered; the rerun needs no call (no key is set: a call would fail)
    out2 = tmp_path / "b2.json"
    r = invoke(world(tmp_path / "o", store, judge, "--batch", "anthropic", "--batch-out", str(out2)))
    rest = anthropic_requests(out2)
    assert {q["custom_id"] for q in rest} == {q["custom_id"] for q in reqs[12:]}
    write_jsonl(tmp_path / "res2.jsonl", [anthropic_answer(q) for q in rest])
    assert invoke(["batch", "ingest", str(tmp_path / "res2.jsonl"), "--store", str(store)]).exit_code == 0
    r = invoke(world(tmp_path / "o", store, judge))
    assert r.exit_code == 0, r.output
    assert (tmp_path / "o" / "result.json").is_file()


def test_an_openai_batch_refuses_an_anthropic_judge(tmp_path):
    r = CliRunner().invoke(app, world(tmp_path / "o", tmp_path / "s.sqlite", "api:anthropic/claude-3-5-haiku-20241022",
                                      "--batch", "openai", "--batch-out", str(tmp_path / "b.jsonl")))
    assert isinstance(r.exception, InputError) and r.exception.field == "--batch"
    assert not (tmp_path / "b.jsonl").exists()


def test_anthropic_params_map_stop_and_refuse_unknown_parameters():
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": 0.0, "max_tokens": 8,
            "stop": "\n", "seed": 3, "logprobs": True, "top_logprobs": 20}
    assert anthropic_params(body) == {"model": "m", "messages": body["messages"], "temperature": 0.0,
                                      "max_tokens": 8, "stop_sequences": ["\n"]}
    with pytest.raises(InputError) as e:
        anthropic_params({**body, "frequency_penalty": 0.5})
    assert e.value.field == "frequency_penalty"


def test_large_batches_split_at_the_provider_limit(tmp_path):
    w = BatchWriter("anthropic", tmp_path / "b.json")
    for i in range(ANTHROPIC_MAX_REQUESTS + 3):
        w.lines[f"{i:064x}"] = ("m", "j", json.dumps({"custom_id": f"{i:064x}", "params": {}}))
    files = w.write()
    assert [(p.name, n) for p, n in files] == [("b.json", ANTHROPIC_MAX_REQUESTS), ("b-2.json", 3)]
    assert len(json.loads(files[1][0].read_text())["requests"]) == 3


# ------------------------------------------------------------------------------------------------- bad files


def _deferred_store(tmp_path, fake_server) -> tuple[Path, list[dict], object]:
    srv = fake_server(responder=label_reply)
    store = tmp_path / "s.sqlite"
    invoke(world(tmp_path / "o", store, "api:openai/fake-model", "--api-base", srv.base_url, "--batch", "openai",
                 "--batch-out", str(tmp_path / "b.jsonl")))
    return store, openai_requests(tmp_path / "b.jsonl"), srv


@pytest.mark.parametrize("case,line,field", [
    ("not json", 2, "line"),
    ("no custom_id", 2, "custom_id"),
    ("unknown id", 2, "custom_id"),
    ("status text", 2, "response.status_code"),
    ("no choices", 2, "response.body.choices"),
    ("neither format", 2, "response"),
    ("bad anthropic type", 2, "result.type"),
])
def test_a_bad_results_line_is_one_error_and_stores_nothing(tmp_path, fake_server, case, line, field):
    store, reqs, srv = _deferred_store(tmp_path, fake_server)
    good = json.dumps(openai_answer(srv, reqs[0]))
    second = openai_answer(srv, reqs[1])
    bad = {
        "not json": "{not json",
        "no custom_id": json.dumps({k: v for k, v in second.items() if k != "custom_id"}),
        "unknown id": json.dumps({**second, "custom_id": "f" * 64}),
        "status text": json.dumps({**second, "response": {**second["response"], "status_code": "200"}}),
        "no choices": json.dumps({**second, "response": {**second["response"], "body": {"choices": []}}}),
        "neither format": json.dumps({"custom_id": reqs[1]["custom_id"], "output": {}}),
        "bad anthropic type": json.dumps({"custom_id": reqs[1]["custom_id"], "result": {"type": "done"}}),
    }[case]
    path = tmp_path / "out.jsonl"
    path.write_text(good + "\n" + bad + "\n")
    r = CliRunner().invoke(app, ["batch", "ingest", str(path), "--store", str(store)])
    assert isinstance(r.exception, InputError), r.output
    assert (r.exception.path, r.exception.line, r.exception.field) == (str(path), line, field)
    assert str(r.exception).startswith(f"{path}:{line}: field '{field}': ")
    with CallStore(store, readonly=True) as cs:
        assert len(cs) == 0                                           # the good line was not stored either


def test_ingest_needs_an_existing_store(tmp_path):
    (tmp_path / "r.jsonl").write_text("")
    r = CliRunner().invoke(app, ["batch", "ingest", str(tmp_path / "r.jsonl"), "--store", str(tmp_path / "no.sqlite")])
    assert isinstance(r.exception, InputError) and r.exception.field == "--store"


def test_batch_out_without_batch_is_refused(tmp_path):
    r = CliRunner().invoke(app, world(tmp_path / "o", tmp_path / "s.sqlite", "reference:constant", "--batch-out",
                                      str(tmp_path / "b.jsonl")))
    assert isinstance(r.exception, InputError) and r.exception.field == "--batch-out"


def test_read_results_tells_the_formats_apart(tmp_path):
    path = write_jsonl(tmp_path / "r.jsonl", [
        {"custom_id": "a", "result": {"type": "expired"}},
        {"id": "x", "custom_id": "b", "response": None, "error": {"code": "batch_cancelled", "message": "cancelled"}},
    ])
    a, b = read_results(path)
    assert (a.provider, a.outcome, b.provider, b.outcome) == ("anthropic", "expired", "openai", "failed")
    assert b.error == "batch_cancelled: cancelled"


def test_ingest_in_python(tmp_path, fake_server):
    store, reqs, srv = _deferred_store(tmp_path, fake_server)
    path = write_jsonl(tmp_path / "o.jsonl", [openai_answer(srv, q) for q in reqs[:3]])
    with CallStore(store) as cs:
        report = ingest([path], cs)
        assert (report.stored, report.already, dict(report.missing)) == (3, 0, {})
        assert len(cs.completed([q["custom_id"] for q in reqs])) == 3


# ------------------------------------------------------------------------------- experiment files, Python


def experiment(tmp_path: Path, srv, judge: str = "api:openai/fake-model", extra: str = "") -> Path:
    """A world experiment file on the tiny set, its paths relative to the file."""
    (tmp_path / "x").write_text("")                                   # the set's path (load_world is patched)
    path = tmp_path / "exp.yaml"
    path.write_text("analysis: world\nout: o\nstore: s.sqlite\nset: tiny:x\n"
                    f"judges:\n  - {judge}\n  - reference:flag-none\n"
                    f"votes: 1\nbootstrap: 0\npermutations: 0\napi_base: {srv.base_url}\n" + extra)
    return path


def test_an_experiment_with_batch_writes_the_request_file_then_runs_from_the_store(tmp_path, fake_server):
    srv = fake_server(responder=label_reply)
    r = invoke(world(tmp_path / "a", tmp_path / "a.sqlite", "api:openai/fake-model", "--judge", "reference:flag-none",
                     "--api-base", srv.base_url))
    assert r.exit_code == 0, r.output
    online, served = stored(tmp_path / "a.sqlite"), len(srv.requests)
    exp = experiment(tmp_path, srv, extra="batch: openai\nbatch_out: batches/b.jsonl\n")
    r = invoke(["run", str(exp)])
    assert r.exit_code == 0, r.output
    assert len(srv.requests) == served                               # no call was made
    assert not (tmp_path / "o" / "result.json").exists()
    reqs = openai_requests(tmp_path / "batches" / "b.jsonl")         # batch_out is relative to the file
    assert {q["custom_id"] for q in reqs} == set(online)             # the online run's call keys
    assert f"batch: {N_CALLS} requests → {tmp_path / 'batches' / 'b.jsonl'} (openai); no call was made" in r.output
    results = write_jsonl(tmp_path / "output.jsonl", [openai_answer(srv, q) for q in reqs])
    assert invoke(["batch", "ingest", str(results), "--store", str(tmp_path / "s.sqlite")]).exit_code == 0
    r = invoke(["run", str(exp)])                                    # the same file: served from the store
    assert r.exit_code == 0, r.output
    assert "no api: judge call is missing from the store; no batch file written" in r.output
    assert len(srv.requests) == served
    assert stored(tmp_path / "s.sqlite") == online
    ra = json.loads((tmp_path / "a" / "result.json").read_text())
    rb = json.loads((tmp_path / "o" / "result.json").read_text())
    assert ra["judges"] == rb["judges"]


def test_run_batch_flags_replace_the_file_keys(tmp_path, fake_server):
    srv = fake_server(responder=label_reply)
    exp = experiment(tmp_path, srv, extra="batch: anthropic\n")
    r = invoke(["run", str(exp), "--batch", "openai", "--batch-out", str(tmp_path / "flag.jsonl")])
    assert r.exit_code == 0, r.output
    assert len(openai_requests(tmp_path / "flag.jsonl")) == N_CALLS and srv.requests == []


@pytest.mark.parametrize("extra, line, field, message", [
    ("batch: azure\n", 12, "batch", "Input should be 'openai' or 'anthropic'"),
    ("bacth: openai\n", 12, "bacth", "experiment takes no 'bacth': its command has no such option"),
    ("batch_out: b.jsonl\n", 12, "batch_out", "--batch-out needs --batch openai|anthropic"),
    ("mlflow_experiment: [a]\n", 12, "mlflow_experiment", "Input should be a valid string"),
])
def test_a_bad_batch_or_mlflow_key_is_one_line_naming_it(tmp_path, fake_server, extra, line, field, message):
    srv = fake_server(responder=label_reply)
    exp = experiment(tmp_path, srv, extra=extra)
    r = CliRunner().invoke(app, ["run", str(exp)])
    e = r.exception
    assert isinstance(e, InputError), r.output
    assert (e.path, e.line, e.field) == (str(exp), line, field) and message in e.message, str(e)
    assert srv.requests == [] and not (tmp_path / "o" / "result.json").exists()


def test_a_batch_error_names_the_key_from_the_file_and_the_flag_from_the_command_line(tmp_path, fake_server):
    srv = fake_server(responder=label_reply)
    claude = "api:anthropic/claude-3-5-haiku-20241022"
    exp = experiment(tmp_path, srv, judge=claude, extra="batch: openai\n")
    e = CliRunner().invoke(app, ["run", str(exp)]).exception
    assert isinstance(e, InputError) and (e.path, e.line, e.field) == (str(exp), 12, "batch"), e
    assert "an openai batch file cannot send it" in e.message
    exp = experiment(tmp_path, srv, judge=claude)
    e = CliRunner().invoke(app, ["run", str(exp), "--batch", "openai"]).exception
    assert isinstance(e, InputError) and (e.path, e.field) == (None, "--batch"), e


def test_a_card_experiment_takes_no_batch(tmp_path):
    (tmp_path / "runs").mkdir()
    exp = tmp_path / "card.yaml"
    exp.write_text("analysis: card\nout: c\njudge: j\nfrom: [runs]\nbatch: openai\n")
    e = CliRunner().invoke(app, ["run", str(exp)]).exception
    assert isinstance(e, InputError) and (e.line, e.field) == (5, "batch"), e
    exp.write_text("analysis: card\nout: c\njudge: j\nfrom: [runs]\n")
    e = CliRunner().invoke(app, ["run", str(exp), "--batch", "openai"]).exception
    assert isinstance(e, InputError) and e.field == "--batch" and "card experiment takes no --batch" in e.message


def test_write_batch_in_python_then_ingest_then_run_from_the_store(tmp_path, fake_server):
    from judgeaudit.interop.batch import write_batch
    from judgeaudit.judges import make_judge
    from judgeaudit.records import JudgeRequest
    from judgeaudit.runtime.executor import run

    srv = fake_server(responder=lambda prompt: "Score: %d" % (1 + len(prompt) % 9))
    judge = make_judge("api:openai/fake-model", api_base=srv.base_url)
    requests = [JudgeRequest(request_id=f"r{i}", form="graded", text="answer " * (i + 1)) for i in range(5)]
    with CallStore(tmp_path / "online.sqlite") as cs:
        online = run(judge, requests, store=cs, progress=False)
    served = len(srv.requests)
    store = tmp_path / "s.sqlite"
    files = write_batch(judge, requests, store, provider="openai", out=tmp_path / "b.jsonl")
    assert files == [(tmp_path / "b.jsonl", 5)] and len(srv.requests) == served
    reqs = openai_requests(tmp_path / "b.jsonl")
    assert [q["custom_id"] for q in reqs] == [judge.key(r) for r in requests]
    lines = [openai_answer(srv, q, text=srv._reply_text(q["body"], q["body"]["messages"][0]["content"]))
             for q in reqs[:4]]                                       # the fifth answer is missing
    report = ingest([write_jsonl(tmp_path / "out.jsonl", lines)], store)
    assert (report.stored, report.already) == (4, 0)
    assert write_batch([judge], requests, store, provider="openai", out=tmp_path / "b2.jsonl") == \
        [(tmp_path / "b2.jsonl", 1)]                                  # only the missing call is batched again
    with CallStore(store) as cs:
        got = run(judge, requests, store=cs, progress=False)
    assert len(srv.requests) == served + 1                           # the missing call, made online
    assert [(v.call_key, v.score) for v in got] == [(v.call_key, v.score) for v in online]
    assert write_batch(judge, requests, store, provider="openai", out=tmp_path / "b3.jsonl") == []
    assert not (tmp_path / "b3.jsonl").exists()
    with pytest.raises(InputError) as e:
        write_batch(make_judge("reference:constant"), requests, store, provider="openai", out=tmp_path / "b4.jsonl")
    assert e.value.field == "judge"


def test_a_results_file_that_is_not_utf8_is_one_line_naming_its_line(tmp_path, fake_server, cli_main):
    store, reqs, srv = _deferred_store(tmp_path, fake_server)
    good = json.dumps(openai_answer(srv, reqs[0])).encode()
    path = tmp_path / "out.jsonl"
    path.write_bytes(good + b"\n" + b'{"custom_id": "caf\xe9"}\n')          # Latin-1, not UTF-8
    r = cli_main("batch", "ingest", path, "--store", store)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}:2: not UTF-8 text (byte 0xe9"), r.stderr
    with CallStore(store, readonly=True) as cs:
        assert len(cs) == 0
