"""The shell blocks of the README and the documentation pages, and how the tests run them.

A fenced block whose language is ``bash``, ``console``, ``sh`` or ``shell`` is a command block. It is run as a
test unless the markdown says why it cannot be, in an HTML comment on the line before its fence:
``<!-- not-run: REASON -->`` (a package install, ``make``, a provider's key, the embedded model's minutes, data
the repository does not hold). A block with a ``title="NAME"`` attribute (```` ```yaml title="my_grader.yaml" ````)
is a file the text shows in full: it is written under that name before the page's commands run. A command
exits 0 unless the comment before its block says ``<!-- exits: N -->`` (a gate's BLIND is exit 2).

The commands of one page run in order in one folder, each reading what the earlier ones wrote. Each line is one
``judgeaudit`` command (``$ `` prompts, ``\\`` continuations and ``#`` comments as a shell reads them; ``VAR=value``
before the command sets the environment; ``$VAR`` and ``"$VAR"`` are expanded), run in this process through
``judgeaudit.cli.main``.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL_LANGS = frozenset({"bash", "console", "sh", "shell"})
_FENCE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)(?P<attrs>.*)$")
_NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(?P<reason>.+?)\s*-->$")
_EXITS = re.compile(r"^<!--\s*exits:\s*(?P<code>\d+)\s*-->$")
_TITLE = re.compile(r'title="(?P<title>[^"]+)"')
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass
class Block:
    path: Path
    line: int                      # 1-based line of the opening fence
    lang: str
    text: str
    title: str | None = None
    not_run: str | None = None     # the reason, when the markdown marks the block not-run
    exits: int = 0                 # the exit code each of its commands must give (``<!-- exits: N -->``)

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def is_shell(self) -> bool:
        return self.lang in SHELL_LANGS


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a markdown file, with its not-run reason and file title."""
    out: list[Block] = []
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, start = m.group("fence"), i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        prev = next((lines[k].strip() for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        marker, exits = _NOT_RUN.match(prev), _EXITS.match(prev)
        title = _TITLE.search(m.group("attrs"))
        out.append(Block(path, start + 1, m.group("lang"), "\n".join(body) + "\n",
                         title.group("title") if title else None, marker.group("reason") if marker else None,
                         int(exits.group("code")) if exits else 0))
        i += 1
    return out


def headings(path: Path) -> list[str]:
    """The headings of a markdown file outside its code blocks, as written (without the #s)."""
    found, fence = [], None
    for line in path.read_text(encoding="utf-8").split("\n"):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group("fence")
        elif fence is not None and line.startswith(fence):
            fence = None
        elif fence is None and (h := re.match(r"^#{1,6}\s+(.*?)\s*$", line)):
            found.append(h.group(1))
    return found


def commands(block: Block) -> list[list[str]]:
    """The block's command lines as argument lists (prompt, continuations and comments removed)."""
    joined: list[str] = []
    pending = ""
    for raw in block.text.split("\n"):
        line = raw.rstrip()
        if block.lang == "console":
            if not line.startswith("$ ") and not pending:
                continue               # a console block's output lines
            line = line[2:] if line.startswith("$ ") else line
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        words = shlex.split(line, comments=True)
        if words:
            joined.append(words)
    return joined


@dataclass
class PageRun:
    """The outcome of running one page's command blocks."""
    ran: list[str] = field(default_factory=list)       # each command, as typed
    outputs: list[str] = field(default_factory=list)


def run_page(path: Path, workdir: Path, env: dict[str, str], invoke) -> PageRun:
    """Run every command block of ``path`` not marked not-run, in order, in ``workdir``; files shown with a title
    are written first. ``invoke(argv, env)`` runs one judgeaudit command and returns (exit code, output)."""
    result = PageRun()
    page = blocks(path)
    for b in page:
        if b.title:
            target = workdir / b.title
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(b.text, encoding="utf-8")
    for b in page:
        if not b.is_shell or b.not_run:
            continue
        for words in commands(b):
            extra = {}
            while words and _ASSIGN.match(words[0]):
                k, v = words.pop(0).split("=", 1)
                extra[k] = v
            assert words and words[0] == "judgeaudit", (
                f"{b.where}: `{' '.join(words)}` is not a judgeaudit command: mark the block "
                f"<!-- not-run: REASON --> or show the command judgeaudit runs")
            scope = {**env, **extra}
            argv = [_expand(w, scope) for w in words[1:]]
            code, output = invoke(argv, scope)
            typed = " ".join(words)
            assert code == b.exits, f"{b.where}: `{typed}` exited {code}, not {b.exits}:\n{output[-3000:]}"
            result.ran.append(typed)
            result.outputs.append(output)
    return result


def _expand(word: str, env: dict[str, str]) -> str:
    return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: env.get(m.group(1), os.environ.get(m.group(1), "")),
                  word)


def judge_reply(prompt: str) -> str:
    """The loopback judge's reply: a deterministic answer in the format the prompt asks for."""
    import hashlib

    h = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    if "Output (a)" in prompt:
        return "Output (a)" if h % 3 else "Output (b)"
    if "[[A]]" in prompt or "response_a" in prompt or "Assistant A" in prompt:
        return "[[A]]" if h % 3 else "[[B]]"
    if '"defective"' in prompt:
        return '{"defective": %s}' % ("true" if h % 2 else "false")
    if "1 to 10" in prompt or "[[N]]" in prompt or "[[rating]]" in prompt:
        return f"Rating: [[{1 + h % 10}]]"
    return f"Score: {1 + h % 9}"


def in_process(capsys, monkeypatch):
    """An ``invoke`` for ``run_page``: ``judgeaudit ARGV`` through ``cli.main`` in this process."""
    from judgeaudit.cli import main

    def invoke(argv: list[str], env: dict[str, str]) -> tuple[int, str]:
        with monkeypatch.context() as m:
            for k, v in env.items():
                m.setenv(k, v)
            m.setattr(sys, "argv", ["judgeaudit", *argv])
            capsys.readouterr()
            try:
                main()
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            out = capsys.readouterr()
        return code, out.out + out.err

    return invoke
