"""The documentation site: it builds strictly from the repository alone, keeps every section the README had, and
every command block of the README and the pages is either run (against a loopback judge) or says why not."""

from __future__ import annotations

import json
import socket

import pytest

from docblocks import ROOT, SHELL_LANGS, blocks, commands, headings, in_process, judge_reply, markdown_files, run_page

# The sections of the README before the reference moved to the site: each is a heading of the README or a page.
FORMER_README_HEADINGS = [
    "judgeaudit", "Judges", "Your own judge template", "Judge backends from other packages", "Runs are resumable",
    "Running the calls on Ray", "The validity profile", "Probe file format (JSONL, one intervention per line)",
    "Validation power: audit the ruler", "Conditional accuracy profiles of pairwise judges",
    "Checkers outside the loop", "World sets", "The structural judge: an entailment graph with certificates",
    "Predictions, the register and the validity card", "Closing the loop", "Building and annotating probes",
    "What a judge must be shown: `judgeaudit world`",
    "After the audit: the number to report (`calibrate`) and a gate for CI (`gate`)",
    "Judge migration: can the new judge replace the one being retired? (`migrate`)",
    "Your own judge: code, structured outputs, your harness", "Python API", "Inspect AI", "Provider batch APIs",
    "promptfoo", "MLflow", "Development", "Architecture",
]

# How many command blocks run in the tests and how many are marked not-run (each with its reason in the markdown).
# A block added, removed or newly marked changes these numbers, so none is skipped silently.
RUN_BLOCKS, NOT_RUN_BLOCKS = 12, 23

PAGES_THAT_RUN = sorted({b.path.name for p in markdown_files() if p.name != "README.md"
                         for b in blocks(p) if b.is_shell and not b.not_run})


def _shell_blocks():
    return [b for p in markdown_files() for b in blocks(p) if b.is_shell]


def test_every_section_of_the_former_readme_is_a_heading_of_the_readme_or_a_page():
    found = {h for p in markdown_files() for h in headings(p)}
    assert [h for h in FORMER_README_HEADINGS if h not in found] == []


def test_every_command_block_is_run_or_says_why_not():
    shell = _shell_blocks()
    not_run = [b for b in shell if b.not_run]
    run = [b for b in shell if not b.not_run]
    assert (len(run), len(not_run)) == (RUN_BLOCKS, NOT_RUN_BLOCKS), (
        "run:\n" + "\n".join(b.where for b in run) + "\nnot run:\n" + "\n".join(f"{b.where}: {b.not_run}"
                                                                           for b in not_run))
    for b in run:                               # what runs is judgeaudit itself, every line of it
        for words in commands(b):
            while words and "=" in words[0] and not words[0].startswith("-"):
                words = words[1:]
            assert words[:1] == ["judgeaudit"], f"{b.where}: {' '.join(words)}"


def test_a_not_run_mark_stands_before_a_command_block():
    for p in markdown_files():
        lines = p.read_text(encoding="utf-8").split("\n")
        for i, line in enumerate(lines):
            if line.strip().startswith("<!-- not-run:"):
                after = next((x.strip() for x in lines[i + 1:] if x.strip()), "")
                assert after.split()[0] in {f"```{lang}" for lang in SHELL_LANGS}, (
                    f"{p.name}:{i + 1}: a not-run mark stands before no command block")


def test_the_two_commands_of_the_readme_are_the_makefiles():
    readme = (ROOT / "README.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert "make demo" in readme and "make test" in readme
    assert "\ndemo:" in makefile and "\ntest:" in makefile and "make test" in (ROOT / ".ci" / "run").read_text()


def test_the_docs_site_builds_strictly_without_the_network(tmp_path, monkeypatch):
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    connect = socket.socket.connect

    def loopback_only(self, address, *a, **k):
        host = address[0] if isinstance(address, tuple) else str(address)
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise OSError(f"the docs build reached for the network: {address}")
        return connect(self, address, *a, **k)

    monkeypatch.setattr(socket.socket, "connect", loopback_only)
    monkeypatch.setenv("NO_MKDOCS_2_WARNING", "1")
    monkeypatch.chdir(ROOT)            # mkdocs.yml's snippet base path is the repository root, as `mkdocs build` there
    site = tmp_path / "site"
    build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(site), strict=True))
    for page in ["index.html", "quickstart/index.html", "python-api/index.html", "statistics/index.html",
                 "migrate/index.html", "calibrate-gate/index.html"]:
        assert (site / page).is_file(), page
    quick = (site / "quickstart" / "index.html").read_text()
    assert "my_grader.yaml" in quick and "llmbar-vanilla" in quick and "--8&lt;--" not in quick   # the README's quick start, included
    api = (site / "python-api" / "index.html").read_text()
    assert "validity_profile" in api and 'class="doc doc-object' in api             # mkdocstrings rendered it
    assert "fonts.googleapis.com" not in (site / "index.html").read_text()


def _structured_reply(prompt: str, schema: dict) -> str:
    form = schema["name"].removesuffix("_verdict")
    if form == "pairwise":
        return json.dumps({"rationale": "", "choice": "A" if len(prompt) % 3 else "B"})
    if form == "graded":
        return json.dumps({"score": 1 + len(prompt) % 9})
    return json.dumps({"defects": []})


@pytest.mark.parametrize("page", PAGES_THAT_RUN)
def test_a_pages_command_blocks_run_as_written(page, tmp_path, fake_server, capsys, monkeypatch):
    srv = fake_server(responder=judge_reply, structured_responder=_structured_reply)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").symlink_to(ROOT / "src")            # run from the clone's root: the shipped slices
    ran = run_page(ROOT / "docs" / page, tmp_path, {"JUDGE": "api:openai/my-model", "JUDGE_URL": srv.base_url},
                   in_process(capsys, monkeypatch))
    expected = [c for b in blocks(ROOT / "docs" / page) if b.is_shell and not b.not_run for c in commands(b)]
    assert len(ran.ran) == len(expected) > 0
