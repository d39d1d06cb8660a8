"""How every report page written by this process carries plotly.js: ``inline`` (the default; the page works
offline) or ``cdn``. Set once per command (the CLI's ``--plotly``), read by ``report.html`` when a page is written;
a module of its own so that setting it loads no page machinery (pandas, jinja2)."""

from __future__ import annotations

from typing import Literal

PlotlyMode = Literal["inline", "cdn"]
PLOTLY_MODES: tuple[str, ...] = ("inline", "cdn")
_plotly_mode: list[str] = ["inline"]


def set_plotly_mode(mode: str) -> None:
    """How every page written from now on carries plotly.js: ``inline`` (embedded; offline) or
    ``cdn`` (a ``<script src>`` to the plotly CDN at the installed plotly's version)."""
    from judgeaudit.errors import InputError

    if mode not in PLOTLY_MODES:
        raise InputError(f"--plotly must be one of {', '.join(PLOTLY_MODES)}, got {mode!r}", field="plotly")
    _plotly_mode[0] = mode


def plotly_mode() -> str:
    """The mode pages are written in (``set_plotly_mode``)."""
    return _plotly_mode[0]
