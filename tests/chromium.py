"""Headless Chromium for the browser tests (Debian's ``chromium`` driven by Playwright).

``require_browser()`` fails with a clear message when ``CI=true`` and Chromium or Playwright is missing, and
skips otherwise; ``launch()`` starts one Chromium (``tests/conftest.py``'s module-scoped ``browser`` fixture).

``FilePages`` opens report pages from this machine's files, offline (every request off ``file:`` is refused,
a ``--plotly cdn`` page's script included, so no test reaches the network), at a width. Its pages share one
renderer process, and a page that embeds plotly.js is shown from a copy beside it that reads the same
plotly.js from one file instead: Chromium then compiles the 3.5 MB script once for all pages instead of once
per page (V8 keeps compiled code per script address in a renderer). What the page draws is the same; a test
about the page as written (plotly.js inline) opens it with ``as_written=True``.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
PAGE_HEIGHT = 900
"""The viewport's height (px) at every width."""


def require_browser() -> None:
    """Fail (``CI=true``) or skip unless Chromium and the playwright package are installed."""
    missing = []
    if not CHROMIUM.exists():
        missing.append(f"{CHROMIUM} (apt-get install -y chromium)")
    if importlib.util.find_spec("playwright") is None:
        missing.append("the playwright package (pip install playwright==1.65.2)")
    if missing:
        msg = "browser tests need " + " and ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)


@contextmanager
def launch() -> Iterator[Any]:
    """One headless Chromium (a Playwright ``Browser``), closed on exit. Playwright's sync API runs its event
    loop in this thread until then: build what needs ``asyncio.run`` before."""
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


class FilePages:
    """Pages of local files in one browser context, offline, sharing one renderer (see the module's text)."""

    def __init__(self, browser: Any, folder: Path) -> None:
        self._plotly = _plotly_js()
        self._script = folder / "plotly.min.js"
        self._script.write_text(self._plotly, encoding="utf-8")
        opener = folder / "opener.html"
        opener.write_text("<!doctype html><title>opener</title>", encoding="utf-8")
        self._context = browser.new_context(viewport={"width": 1280, "height": PAGE_HEIGHT})
        self._context.route(lambda url: not url.startswith("file:"), lambda route: route.abort())
        # pages opened by one file page stay in its renderer process (a new tab would start its own)
        self._opener = self._context.new_page()
        self._opener.goto(opener.as_uri())

    def shown_from(self, path: Path) -> Path:
        """The file a browser loads for ``path``: itself, or when it embeds plotly.js a copy beside it
        (``<name>.plotly-file.html``, same folder so its links resolve alike) that reads plotly.js from
        the shared file."""
        html = path.read_text(encoding="utf-8")
        inline = f"<script>{self._plotly}</script>"
        if self._plotly not in html:
            return path
        assert html.count(inline) == 1, f"{path}: plotly.js is not embedded once as one script"
        copy = path.with_name(f"{path.stem}.plotly-file.html")
        copy.write_text(html.replace(inline, f'<script src="{self._script.as_uri()}" charset="utf-8"></script>'),
                        encoding="utf-8")
        return copy

    def open(self, path: Path, width: int, *, as_written: bool = False) -> Any:
        """``path`` loaded at ``width`` px (plotly.js from the shared file unless ``as_written``)."""
        with self._opener.expect_popup() as popup:
            self._opener.evaluate("() => { window.open('', '_blank'); }")
        page = popup.value
        page.set_viewport_size({"width": width, "height": PAGE_HEIGHT})
        target = path if as_written else self.shown_from(path)
        page.goto(target.as_uri(), timeout=180_000)   # a 5 MB page on a busy 2-core machine
        return page

    def close(self) -> None:
        self._context.close()
