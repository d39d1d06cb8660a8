"""A gate's outcome as a Markdown summary (for ``$GITHUB_STEP_SUMMARY``) and as JUnit XML (one test
case per bar: FAIL is a failure, BLIND an error — the check could not be made)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from judgeaudit.gate.evaluate import GateResult

_ICON = {"PASS": "✅", "FAIL": "❌", "BLIND": "⚠️"}


def markdown(r: GateResult, title: str = "judgeaudit gate") -> str:
    lines = [f"## {title}: {_ICON[r.outcome]} {r.outcome}", ""]
    if r.judge:
        lines += [f"Judge: `{r.judge}`", ""]
    lines += ["| outcome | bar | reading |", "|---|---|---|"]
    for b in r.bars:
        why = "<br>".join(f"{c.label}: {c.why}".replace("|", "\\|") for c in b.checks)
        lines.append(f"| {_ICON[b.outcome]} {b.outcome} | {b.bar.name.replace('|', chr(92) + '|')} | {why} |")
    lines += ["", "PASS: the interval clears the bar. FAIL: the interval is on the wrong side. BLIND: the runs could "
                  "not have detected a failure (interval straddles the bar, section or arm missing, too few units)."]
    return "\n".join(lines) + "\n"


def junit_xml(r: GateResult, suite: str = "judgeaudit.gate") -> str:
    fails = sum(b.outcome == "FAIL" for b in r.bars)
    blind = sum(b.outcome == "BLIND" for b in r.bars)
    root = ET.Element("testsuites")
    s = ET.SubElement(root, "testsuite", name=suite, tests=str(len(r.bars)), failures=str(fails), errors=str(blind))
    for b in r.bars:
        case = ET.SubElement(s, "testcase", classname=suite, name=b.bar.name)
        text = "\n".join(f"{c.label}: {c.outcome}: {c.why}" for c in b.checks)
        if b.outcome == "FAIL":
            ET.SubElement(case, "failure", message=f"FAIL: {b.bar.text}", type="FAIL").text = text
        elif b.outcome == "BLIND":
            ET.SubElement(case, "error", message=f"BLIND: {b.bar.text}", type="BLIND").text = text
        else:
            ET.SubElement(case, "system-out").text = text
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_summaries(r: GateResult, *, summary: Path | None = None, junit: Path | None = None,
                    step_summary: str | None = None) -> None:
    """Write the Markdown to ``summary`` and append it to ``step_summary`` (GitHub's
    ``$GITHUB_STEP_SUMMARY``, appended as GitHub documents); the JUnit XML to ``junit``."""
    md = markdown(r)
    if summary is not None:
        summary.write_text(md, encoding="utf-8")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as fh:
            fh.write(md)
    if junit is not None:
        junit.write_text(junit_xml(r), encoding="utf-8")
