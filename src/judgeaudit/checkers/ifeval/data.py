"""Reading IFEval prompt and response files and joining them (the I/O side of the checker).

The released evaluator joins a response to its prompt by the exact prompt text, and Google's
evaluation rejects a prompt without a response before scoring, listing every missing key. One
prompt of ``input_data.jsonl`` (key 2785) was edited upstream ("Fix an eval prompt", 2024-06-11:
"at least one placeholder" became "at least 3 placeholders") after Google's GPT-4 responses were
written, so its text no longer matches the response file's. :func:`join` therefore joins by text
only (``by="text"``, the default) and names every prompt left without a response; a stale
response is never scored against an edited prompt. Only when asked (``by="position"``) does a
prompt left without a response take the response on the *same line* of the response file, when
that response's own prompt text matched no prompt (the response file lists the prompts in
``input_data.jsonl`` order); every such fallback is returned with both texts. A prompt text given
twice in a response file is refused (:func:`read_responses`), naming both lines.
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


JOINS = ("text", "position")
"""How :func:`join` pairs responses with prompts: by exact text only, or with the line-position fallback."""


def read_responses(path: str | Path) -> list[Response]:
    """The ``{prompt, response}`` lines of a response file; ``InputError`` naming both lines when a
    prompt text is given twice (which response would be scored is otherwise a matter of order)."""
    out = []
    seen: dict[str, int] = {}
    for line, obj in iter_jsonl(path):
        for name in ("prompt", "response"):
            if name not in obj:
                raise InputError("required field is missing", path=path, line=line, field=name)
            if not isinstance(obj[name], str):
                raise InputError(f"must be a string, got {obj[name]!r}", path=path, line=line, field=name)
        if obj["prompt"] in seen:
            raise InputError(f"a second response to the prompt of line {seen[obj['prompt']]} (one response "
                             "per prompt)", path=path, line=line, field="prompt")
        seen[obj["prompt"]] = line
        out.append(Response(line, obj["prompt"], obj["response"]))
    if not out:
        raise InputError("no responses found", path=path)
    return out


def join(items: list[tuple[int, IFEvalItem]], responses: list[Response], *, by: str = "text",
         skip_missing: bool = False, responses_path: str | Path | None = None,
         ) -> tuple[list[tuple[IFEvalItem, str]], list[PositionJoin]]:
    """Each item with its response: by exact prompt text, else (``by="position"``) by line position
    (see module doc).

    Returns the joined pairs in prompt-file order and the position joins made. A prompt left
    without a response is an ``InputError`` listing every such key, unless ``skip_missing`` (then
    it is left out of the pairs; the caller counts it).
    """
    if by not in JOINS:
        raise InputError(f"join must be one of {', '.join(JOINS)}, got {by!r}", field="join")
    by_text = {r.prompt: r for r in responses}
    prompts = {it.prompt for _, it in items}
    orphans = {i: r for i, r in enumerate(responses) if r.prompt not in prompts} if by == "position" else {}
    pairs: list[tuple[IFEvalItem, str]] = []
    fallbacks: list[PositionJoin] = []
    missing: list[int] = []
    for pos, (_line, it) in enumerate(items):
        r = by_text.get(it.prompt)
        if r is None:
            r = orphans.pop(pos, None)
            if r is None:
                missing.append(it.key)
                continue
            fallbacks.append(PositionJoin(it.key, r.line, it.prompt, r.prompt))
        pairs.append((it, r.response))
    if missing and not skip_missing:
        how = "neither by text nor by line position" if by == "position" else \
            "by prompt text (a response whose prompt differs is not scored; --join position joins by line)"
        raise InputError(f"no response for prompt key{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(map(str, missing))} ({how})", path=responses_path, field="prompt")
    return pairs, fallbacks
