"""The requests of an analysis as files a user's own harness runs: JSONL, an Inspect AI task, a promptfoo
test file. Pure functions from requests to rows and file texts; the command (``judgeaudit requests export``)
builds the requests and writes the files.

A row of ``requests.jsonl`` is one call: ``request_id``, ``epoch`` (the vote or regrade index), ``form``,
the request's fields (``text``, ``evidence``, ``criterion``, ``question``, ``reference``, ``units``,
``prompt``, ``response_a``, ``response_b``; ``null`` where unset), ``meta`` (judgeaudit's bookkeeping,
without the gold of world items, which a judge under audit must not see), ``rendered`` (the exact text
sent: judgeaudit's template for the form, or with a judge given, the text that judge's call key hashes)
``messages`` (the same call as chat messages with their roles: a template's system prompt is a ``system``
message, never folded into the user's), ``template`` (the provenance of the judge template that renders and
reads the call — name, version, hash, scale, reply format — ``null`` for judgeaudit's built-ins) and
``call_key`` (that judge's call key; ``null`` without one). :func:`read_requests` turns the rows back into
requests, so a scripted judge answers exactly what was exported.

The Inspect task sends each sample's messages with their roles and reads the reply with the template's own
parser on its scale, writing the scale (and direction) into each score's metadata, which ``replay:inspect:``
reads; the promptfoo config sends each test's messages as promptfoo's chat format (a JSON list of ``{role,
content}``).

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
from judgeaudit.judges.templates import JudgeTemplate
from judgeaudit.records import JudgeRequest

FIELDS = ("text", "evidence", "criterion", "question", "reference", "units", "prompt", "response_a", "response_b")
HIDDEN_META = ("gold",)
"""``meta`` keys never exported: the gold a world item carries for the oracle instrument."""
ROW_KEYS = ("request_id", "epoch", "form", *FIELDS, "meta", "rendered", "messages", "template", "call_key",
            "judge")


def export_row(request: JudgeRequest, judge: Judge | None = None, template: JudgeTemplate | None = None
               ) -> dict[str, Any]:
    """One request as an exported row (see the module doc); ``template``: the judge template that renders
    it (default: ``judge``'s, else judgeaudit's built-in prompt)."""
    template = template if template is not None else getattr(judge, "template", None)
    row: dict[str, Any] = {"request_id": request.request_id, "epoch": request.epoch, "form": request.form}
    row.update({f: getattr(request, f) for f in FIELDS})
    row["meta"] = {k: v for k, v in request.meta.items() if k not in HIDDEN_META}
    if judge is not None:
        row["rendered"] = judge.render(request)
    else:
        row["rendered"] = template.render(request) if template is not None else render(request)
    row["messages"] = template.messages(request) if template is not None else \
        [{"role": "user", "content": row["rendered"]}]
    row["template"] = template.provenance() if template is not None else None
    row["call_key"] = judge.key(request) if judge is not None else None
    row["judge"] = judge.id if judge is not None else None
    return row


def export_rows(requests: list[JudgeRequest], judge: Judge | None = None,
                template: JudgeTemplate | None = None) -> list[dict[str, Any]]:
    return [export_row(r, judge, template) for r in requests]


def request_of(row: dict[str, Any]) -> JudgeRequest:
    """The request an exported row describes (``rendered``, ``messages``, ``template``, ``call_key`` and
    ``judge`` dropped)."""
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

    inspect eval {task_file} --model <your provider/model> --log-dir logs
    judgeaudit {analysis} run ... --judge replay:inspect:logs/<the .eval file>

Each sample is one request (id = request_id; its input is the exact messages judgeaudit sends, with their
roles); the task asks each sample {epochs} time(s) (Inspect epoch k is judgeaudit epoch k-1). The scorer
reads the model's reply with {reader}: a graded reply's score (on {scale_text}) or a pairwise reply's choice
(A, B or tie) is the value, and each score's metadata records the scale and the template, which
``replay:inspect:`` reads; a reply the parser cannot read is left unscored, and judgeaudit counts it as a
parse failure.
"""

import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import TaskState, generate

REQUESTS = Path(__file__).with_name({requests_file!r})
EPOCHS = {epochs}
TEMPLATE = json.loads({template_json!r})   # the judge template (null: judgeaudit's built-in prompts)
ROLES = {{"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}}


def _samples():
    samples = []
    for line in REQUESTS.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["epoch"] != 0:
            continue   # one sample per request id; Inspect's epochs ask it again (EPOCHS > 1)
        messages = [ROLES[m["role"]](content=m["content"]) for m in row["messages"]]
        samples.append(Sample(id=row["request_id"], input=messages, metadata={{"judgeaudit_request": row}}))
    return samples


@scorer(metrics=[])
def judgeaudit_reply():
    """The model's reply read with the template's parser (judgeaudit's for the request's form without one)."""

    async def score(state: TaskState, target: Target) -> Score:
        from judgeaudit.interop.export import request_of
        from judgeaudit.judges.elicit import parse_request
        from judgeaudit.judges.scale import OVERREACH_SCALE
        from judgeaudit.judges.templates import JudgeTemplate

        request = request_of(state.metadata["judgeaudit_request"])
        reply = state.output.completion
        template = JudgeTemplate.model_validate(TEMPLATE) if TEMPLATE is not None else None
        if template is not None and template.form == request.form:
            parsed, scale = template.parse(request, reply), template.scale
            ref = template.ref()
        else:
            parsed, scale, ref = parse_request(request, reply), (OVERREACH_SCALE if request.form == "graded"
                                                                 else None), None
        meta = {{"judgeaudit": {{"scale": scale.to_dict() if scale is not None else None, "template": ref,
                                "definition": TEMPLATE if ref is not None else None, "form": request.form}}}}
        if not parsed.ok:
            return Score.unscored(reason="grader_failed", answer=reply, explanation=parsed.error, metadata=meta)
        if request.form == "pairwise":
            value = parsed.choice
        elif parsed.score is not None:
            value = parsed.score
        else:   # a world label, unit or id report: judgeaudit re-reads it from the answer
            value = float(bool(parsed.label))
            meta["judgeaudit"]["scale"] = None
        return Score(value=value, answer=reply, explanation=parsed.rationale, metadata=meta)

    return score


@task
def judgeaudit_requests():
    return Task(dataset=MemoryDataset(_samples()), solver=generate(), scorer=judgeaudit_reply(), epochs=EPOCHS)
'''


def inspect_task_source(requests: list[JudgeRequest], *, analysis: str, requests_file: str = "requests.jsonl",
                        task_file: str = "inspect_task.py", template: JudgeTemplate | None = None) -> str:
    """The text of an Inspect AI task file over the exported requests (read from ``requests_file`` next to
    it), with a scorer that reads each reply with ``template``'s parser on its scale (judgeaudit's parser for
    the request's form, on its 1-9, without one)."""
    import json

    if template is not None:
        reader = f"judge template {template.name} {template.version}'s parser ({template.parser.format})"
        scale_text = (f"its {template.scale.label()} scale, a higher grade {template.scale.higher}"
                      if template.scale is not None else "no scale")
    else:
        reader, scale_text = "judgeaudit's own parser for the request's form", "judgeaudit's 1-9"
    dump = json.dumps(template.model_dump(mode="json") if template is not None else None)
    return _INSPECT_TASK.format(analysis=analysis, requests_file=requests_file, task_file=task_file,
                                epochs=inspect_epochs(requests), template_json=dump, reader=reader,
                                scale_text=scale_text)


PROMPTFOO_PROMPT = "{{judge_messages}}"
"""The promptfoo prompt: each test's ``judge_messages`` var, a JSON list of ``{role, content}`` messages, which
promptfoo sends as chat messages with their roles (its chat format); a text var, so promptfoo does not expand
it as it expands list vars."""


def promptfoo_tests(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """promptfoo test cases (``tests:`` entries), one per exported row: ``vars`` holds the messages as
    promptfoo's chat format (``judge_messages``, JSON text), the rendered prompt (``judge_prompt``) and the
    request's ids (``id`` = ``request_id`` and ``epoch``, which ``replay:promptfoo:`` reads back); ``metadata``
    the same ids for filtering."""
    import json

    out = []
    for row in rows:
        ids = {"request_id": row["request_id"], "epoch": row["epoch"], "form": row["form"]}
        out.append({"description": f"{row['request_id']} (epoch {row['epoch']})",
                    "vars": {"judge_messages": json.dumps(row["messages"], ensure_ascii=False),
                             "judge_prompt": row["rendered"], "id": row["request_id"], **ids},
                    "metadata": ids})
    return out


def promptfoo_config(*, analysis: str, tests_file: str = "promptfoo_tests.yaml") -> dict[str, Any]:
    """A promptfoo config that sends each test's messages as they are; the provider is the user's (the file
    written by ``requests export`` says where it goes in a comment)."""
    return {"description": f"judgeaudit {analysis} requests (judgeaudit requests export)",
            "prompts": [PROMPTFOO_PROMPT],
            "tests": f"file://{tests_file}"}
