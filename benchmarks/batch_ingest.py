"""Batch ingest throughput: 100,000 provider answers read into the call store, side by side with the online
path after an answer arrives (the same reply parsed into a verdict, then one ``CallStore.put`` per call, as the
executor writes them), in one run.

    PYTHONPATH=src python benchmarks/batch_ingest.py [--n 100000]

Prints rows/s of both paths and their ratio (ingest ÷ online); both parse each reply the same way. The
answers are OpenAI batch output lines for graded requests of one ``api:`` judge (the reply ``Score: N``),
written to a temporary folder; nothing leaves the machine. The ingest figure includes what ingest does per
row: reading the JSON line, rendering the request and hashing its key, parsing the reply into a verdict, and
storing it (every row in one transaction).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from judgeaudit.interop.batch import BatchWriter, ingest  # noqa: E402
from judgeaudit.judges import make_judge  # noqa: E402
from judgeaudit.records import JudgeRequest  # noqa: E402
from judgeaudit.runtime.store import CallStore  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    n = ap.parse_args().n
    judge = make_judge("api:openai/gpt-4o-mini")
    requests = [JudgeRequest(request_id=f"r{i}", form="graded", text=f"claim number {i}", evidence="evidence")
                for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        # the batch file and the store's record of the deferred calls (not timed)
        writer = BatchWriter("openai", tmp_path / "batch.jsonl")
        batch_store = CallStore(tmp_path / "batch.sqlite")
        calls = {judge.key(r): r for r in requests}
        writer.defer(judge, calls, batch_store)
        writer.write()
        with open(tmp_path / "output.jsonl", "w") as fh:
            for i, key in enumerate(calls):
                body = {"id": f"chatcmpl-{i}", "object": "chat.completion", "model": "gpt-4o-mini",
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": f"Score: {i % 9 + 1}"}}],
                        "usage": {"prompt_tokens": 200, "completion_tokens": 3, "total_tokens": 203}}
                fh.write(json.dumps({"id": f"batch_req_{i}", "custom_id": key,
                                     "response": {"status_code": 200, "request_id": f"req_{i}", "body": body},
                                     "error": None}) + "\n")

        started = time.perf_counter()
        report = ingest([tmp_path / "output.jsonl"], batch_store)
        ingest_s = time.perf_counter() - started
        assert report.stored == n, report.line()
        verdicts = batch_store.frame()
        batch_store.close()

        # the online path after each answer arrives: the same parse into a verdict, then one put (one commit)
        # per call, as the executor stores them
        replies = [(calls[key], f"Score: {i % 9 + 1}") for i, key in enumerate(calls)]
        online = CallStore(tmp_path / "online.sqlite")
        started = time.perf_counter()
        for request, text in replies:
            v = judge.batch_verdict(request, want_logprobs=True, text=text, choice={"message": {"content": text}},
                                    input_tokens=200, output_tokens=3, provider="openai")
            online.put(v)
        online_s = time.perf_counter() - started
        online.close()
        assert len(verdicts) == n

    print(f"batch ingest: {n} rows in {ingest_s:.2f} s = {n / ingest_s:,.0f} rows/s "
          "(read, render + key, parse, store in one transaction)")
    print(f"online path: {n} rows in {online_s:.2f} s = {n / online_s:,.0f} rows/s (the same parse, one put per call)")
    print(f"ratio ingest / online: {online_s / ingest_s:.2f}")


if __name__ == "__main__":
    main()
