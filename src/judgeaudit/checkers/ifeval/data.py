"""Reading IFEval prompt and response files and joining them (the I/O side of the checker).

The released evaluator joins a response to its prompt by the exact prompt text. One prompt of
``input_data.jsonl`` (key 2785) was edited upstream ("Fix an eval prompt", 2024-06-11: "at least
one placeholder" became "at least 3 placeholders") after Google's GPT-4 responses were written, so
its text no longer matches the response file's. :func:`join` therefore joins by text first and
then, for a prompt left without a response, takes the response on the *same line* of the response
file when that response's own prompt text matched no prompt (the response file lists the prompts
in ``input_data.jsonl`` order). Every such fallback is returned and recorded in the result, with
both texts; anything still unmatched is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from judgeaudit.checkers.ifeval.evaluate import IFEvalItem, make_item
from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl


@dataclass(frozen=True)
class Response:
    """One line of a response file."""

    line: int
    prompt: str
    response: str


@dataclass(frozen=True)
class PositionJoin:
    """A prompt joined to a response by line position because their texts differ."""

    key: int
    line: int
    prompt: str
    response_prompt: str

    def to_dict(self) -> dict[str, object]:
        return {"key": self.key, "line": self.line, "prompt": self.prompt, "response_prompt": self.response_prompt}


def read_items(path: str | Path) -> list[tuple[int, IFEvalItem]]:
    """``(line, item)`` per prompt of an ``input_data.jsonl``-style file."""
    out = []
    for line, obj in iter_jsonl(path):
        try:
            out.append((line, make_item(obj)))
        except InputError as e:
            raise InputError(e.message, path=path, line=line, field=e.field) from None
    if not out:
        raise InputError("no prompts found", path=path)
    keys: dict[int, int] = {}
    for line, it in out:
        if it.key in keys:
            raise InputError(f"key {it.key} also on line {keys[it.key]}", path=path, line=line, field="key")
        keys[it.key] = line
    return out


def read_responses(path: str | Path) -> list[Response]:
    """The ``{prompt, response}`` lines of a response file."""
    out = []
    for line, obj in iter_jsonl(path):
        for name in ("prompt", "response"):
            if name not in obj:
                raise InputError("required field is missing", path=path, line=line, field=name)
            if not isinstance(obj[name], str):
                raise InputError(f"must be a string, got {obj[name]!r}", path=path, line=line, field=name)
        out.append(Response(line, obj["prompt"], obj["response"]))
    if not out:
        raise InputError("no responses found", path=path)
    return out


def join(items: list[tuple[int, IFEvalItem]], responses: list[Response], *,
         responses_path: str | Path | None = None) -> tuple[list[tuple[IFEvalItem, str]], list[PositionJoin]]:
    """Each item with its response: by exact prompt text, else by line position (see module doc).

    Returns the joined pairs in prompt-file order and the position joins made. A prompt text given
    twice in the response file keeps its last response (as the released evaluator's dict does).
    """
    by_text = {r.prompt: r for r in responses}
    prompts = {it.prompt for _, it in items}
    orphans = {i: r for i, r in enumerate(responses) if r.prompt not in prompts}
    pairs: list[tuple[IFEvalItem, str]] = []
    fallbacks: list[PositionJoin] = []
    for pos, (_line, it) in enumerate(items):
        r = by_text.get(it.prompt)
        if r is None:
            r = orphans.pop(pos, None)
            if r is None:
                raise InputError(f"no response for prompt key {it.key} (neither by text nor on line {pos + 1})",
                                 path=responses_path, field="prompt")
            fallbacks.append(PositionJoin(it.key, r.line, it.prompt, r.prompt))
        pairs.append((it, r.response))
    return pairs, fallbacks
