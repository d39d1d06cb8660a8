"""The report section of a run's judge calls: failed calls and parse failures per judge, with the
first distinct reasons (``runtime.failures.CallSummary``)."""

from __future__ import annotations

from judgeaudit.report.html import Section, table_html
from judgeaudit.runtime.failures import CallSummary


def calls_section(summary: CallSummary) -> Section:
    """A table per judge: calls, failed calls, parse failures, usable verdicts, first reasons; a red
    banner names each judge that produced no usable verdict."""
    banners = [f"!Judge {j.judge_id} produced no usable verdict ({j.failed_calls} failed calls, "
               f"{j.parse_failures} parse failures): its cells are empty." for j in summary.unusable()]
    body = (table_html(summary.to_frame()) + "<p class='note'>A failed call did not complete (the backend, the "
            "server or the request failed; it is retried on the next run); a parse failure completed but its "
            "answer could not be read. Neither enters an estimate.</p>")
    return Section("Judge calls: failed calls and parse failures", body, banners)
