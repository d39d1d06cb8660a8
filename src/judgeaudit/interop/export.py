"""The requests of an analysis as files a user's own harness runs: JSONL, an Inspect AI task, a promptfoo
test file. Pure functions from requests to rows and file texts; the command (``judgeaudit requests export``)
builds the requests and writes the files.

A row of ``requests.jsonl`` is one call: ``request_id``, ``epoch`` (the vote or regrade index), ``form``,
the request's fields (``text``, ``evidence``, ``criterion``, ``question``, ``reference``, ``units``,
``prompt``, ``response_a``, ``response_b``; ``null`` where unset), ``meta`` (judgeaudit's bookkeeping,
without the gold of world items, which a judge under audit must not see), ``rendered`` (the exact text
sent: judgeaudit's template for the form, or with a judge given, the text that judge's call key hashes)
and ``call_key`` (that judge's call key; ``null`` without one). :func:`read_requests` turns the rows back
into requests, so a scripted judge answers exactly what was exported.

Verdicts come back as a replay file (``replay:FILE``: one row per ``request_id`` and ``epoch`` with a
``score``, a ``choice``, or the ``raw`` reply, read with the form's parser) or an Inspect eval log of the
task written here (``replay:inspect:LOG``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl
from judgeaudit.judges.base import Judge
from judgeaudit.judges.elicit import render
from judgeaudit.records import JudgeRequest

FIELDS = ("text", "evidence", "criterion", "question", "reference", "units", "prompt", "response_a", "response_b")
HIDDEN_META = ("gold",)
"""``meta`` keys never exported: the gold a world item carries for the oracle instrument."""
ROW_KEYS = ("request_id", "epoch", "form", *FIELDS, "meta", "rendered", "call_key", "judge")


def export_row(request: JudgeRequest, judge: Judge | None = None) -> dict[str, Any]:
    """One request as an exported row (see the module doc)."""
    row: dict[str, Any] = {"request_id": request.request_id, "epoch": request.epoch, "form": request.form}
    row.update({f: getattr(request, f) for f in FIELDS})
    row["meta"] = {k: v for k, v in request.meta.items() if k not in HIDDEN_META}
    row["rendered"] = judge.render(request) if judge is not None else render(request)
    row["call_key"] = judge.key(request) if judge is not None else None
    row["judge"] = judge.id if judge is not None else None
    return row


def export_rows(requests: list[JudgeRequest], judge: Judge | None = None) -> list[dict[str, Any]]:
    return [export_row(r, judge) for r in requests]


def request_of(row: dict[str, Any]) -> JudgeRequest:
    """The request an exported row describes (``rendered``, ``call_key`` and ``judge`` dropped)."""
    fields = {k: row[k] for k in ("request_id", "epoch", "form", *FIELDS) if row.get(k) is not None}
    return JudgeRequest(meta=dict(row.get("meta") or {}), **fields)


def read_requests(path: str | Path) -> list[JudgeRequest]:
    """The requests of an exported ``requests.jsonl`` (``InputError`` naming the line of a bad row)."""
    out = []
    for n, row in iter_jsonl(path):
        missing = next((k for k in ("request_id", "form") if k not in row), None)
        if missing:
            raise InputError("required field is missing", path=path, line=n, field=missing)
        try:
            out.append(request_of(row))
        except ValueError as e:
            raise InputError(f"not an exported request ({str(e).splitlines()[0]})", path=path, line=n,
                             field="request_id") from None
    return out


def inspect_epochs(requests: list[JudgeRequest]) -> int:
    """The epochs an Inspect task asks each sample for: ``k`` when every request id comes with the epochs
    0..k-1 (world votes), else 1 (the epoch-0 requests; a partial set such as validity's regrades is left
    out and those requests are not answered by the log)."""
    epochs: dict[str, set[int]] = {}
    for r in requests:
        epochs.setdefault(r.request_id, set()).add(r.epoch)
    sets = {frozenset(s) for s in epochs.values()}
    if len(sets) == 1:
        (only,) = sets
        if only == frozenset(range(len(only))):
            return len(only)
    return 1


_INSPECT_TASK = '''"""Inspect AI task over the requests exported by ``judgeaudit requests export --analysis {analysis}``.

Run it with your model, then bring the verdicts back to judgeaudit:

    inspect eval {task_file} --model openai/gpt-4o-mini --log-dir logs
    judgeaudit {analysis} run ... --judge replay:inspect:logs/<the .eval file>

Each sample is one request (id = request_id; its input is the exact prompt judgeaudit renders); the task
asks each sample {epochs} time(s) (Inspect epoch k is judgeaudit epoch k-1). The scorer reads the model's
reply with judgeaudit's own parser for the request's form: a graded reply's score (1-9) or a pairwise
reply's choice (A, B or tie) is the value; a reply the parser cannot read is left unscored, and judgeaudit
counts it as a parse failure.
"""

import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import TaskState, generate

REQUESTS = Path(__file__).with_name({requests_file!r})
EPOCHS = {epochs}


def _samples():
    samples = []
    for line in REQUESTS.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["epoch"] != 0:
            continue   # one sample per request id; Inspect's epochs ask it again (EPOCHS > 1)
        samples.append(Sample(id=row["request_id"], input=row["rendered"], metadata={{"judgeaudit_request": row}}))
    return samples


@scorer(metrics=[])
def judgeaudit_reply():
    """The model's reply read with judgeaudit's parser for the request's form."""

    async def score(state: TaskState, target: Target) -> Score:
        from judgeaudit.interop.export import request_of
        from judgeaudit.judges.elicit import parse_request

        request = request_of(state.metadata["judgeaudit_request"])
        reply = state.output.completion
        parsed = parse_request(request, reply)
        if not parsed.ok:
            return Score.unscored(reason="grader_failed", answer=reply, explanation=parsed.error)
        if request.form == "pairwise":
            value = parsed.choice
        elif parsed.score is not None:
            value = parsed.score
        else:   # a world label, unit or id report: judgeaudit re-reads it from the answer
            value = float(bool(parsed.label))
        return Score(value=value, answer=reply, explanation=parsed.rationale)

    return score


@task
def judgeaudit_requests():
    return Task(dataset=MemoryDataset(_samples()), solver=generate(), scorer=judgeaudit_reply(), epochs=EPOCHS)
'''


def inspect_task_source(requests: list[JudgeRequest], *, analysis: str, requests_file: str = "requests.jsonl",
                        task_file: str = "inspect_task.py") -> str:
    """The text of an Inspect AI task file over the exported requests (read from ``requests_file`` next to
    it), with a scorer that reads each reply with judgeaudit's parser."""
    return _INSPECT_TASK.format(analysis=analysis, requests_file=requests_file, task_file=task_file,
                                epochs=inspect_epochs(requests))


def promptfoo_tests(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """promptfoo test cases (``tests:`` entries), one per exported row: ``vars`` holds the rendered prompt
    (``judge_prompt``) and the request's ids; ``metadata`` the same ids for filtering."""
    out = []
    for row in rows:
        ids = {"request_id": row["request_id"], "epoch": row["epoch"], "form": row["form"]}
        out.append({"description": f"{row['request_id']} (epoch {row['epoch']})",
                    "vars": {"judge_prompt": row["rendered"], **ids}, "metadata": ids})
    return out


def promptfoo_config(*, analysis: str, tests_file: str = "promptfoo_tests.yaml") -> dict[str, Any]:
    """A promptfoo config that sends each test's rendered prompt as it is; the provider is the user's."""
    return {"description": f"judgeaudit {analysis} requests (judgeaudit requests export)",
            "prompts": ["{{judge_prompt}}"],
            "providers": ["openai:gpt-4o-mini"],
            "tests": f"file://{tests_file}"}
