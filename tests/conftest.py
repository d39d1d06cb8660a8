"""Shared fixtures: the local OpenAI-compatible server, offline settings, data-set locations and headless Chromium."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# One BLAS thread per test process: two xdist workers on two cores, each with a multi-threaded OpenBLAS, spend
# their time spinning on tiny matrix products (an L-BFGS step on a 130-column design took 8 ms of CPU instead of
# microseconds). Read when numpy first loads, so before any test module imports it; subprocesses inherit it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@pytest.fixture
def fake_server():
    from fakeserver import FakeServer

    servers = []

    def start(**kw):
        srv = FakeServer(**kw).start()
        servers.append(srv)
        return srv

    yield start
    for s in servers:
        s.stop()


@pytest.fixture
def data_dir() -> Path:
    """The full public data sets (JUDGEAUDIT_DATA_DIR); skips with a clear message when unset."""
    root = os.environ.get("JUDGEAUDIT_DATA_DIR")
    if not root or not Path(root).is_dir():
        pytest.skip("JUDGEAUDIT_DATA_DIR is not set to the public data folder (make test sets it to ../shared/data)")
    return Path(root)


@pytest.fixture
def cli_main(capsys, monkeypatch):
    """``judgeaudit ARGS`` through ``cli.main`` in this process, as a ``CompletedProcess`` (exit code, stdout,
    stderr): what a subprocess of the program returns, without a Python start-up per call. Keep one
    subprocess per test file for the real entry point."""
    import subprocess
    import sys

    from judgeaudit.cli import main

    def run(*args):
        argv = ["judgeaudit", *map(str, args)]
        capsys.readouterr()
        monkeypatch.setattr(sys, "argv", argv)
        try:
            main()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(argv, code, out.out, out.err)

    return run


@pytest.fixture
def cli_run(cli_main):
    """``judgeaudit ARGS`` in this process (``cli_main``): (exit code, stdout and stderr)."""
    def run(*args):
        p = cli_main(*args)
        return p.returncode, p.stdout + p.stderr

    return run


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for a test module (``tests/chromium.py``; fails under ``CI=true`` when Chromium or
    Playwright is missing, skips otherwise). Module-scoped: Playwright's sync API holds the thread's event loop
    while it runs, which the next module's ``asyncio.run`` needs."""
    from chromium import launch

    with launch() as b:
        yield b


@pytest.fixture(scope="module")
def file_pages(browser, tmp_path_factory):
    """Local pages opened offline at a width in one renderer (``chromium.FilePages``)."""
    from chromium import FilePages

    pages = FilePages(browser, tmp_path_factory.mktemp("pages"))
    yield pages
    pages.close()
