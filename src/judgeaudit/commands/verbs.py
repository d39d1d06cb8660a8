"""The verb groups the command line loads on first use (``judgeaudit.cli``): the module of each and its help.

The top-level ``judgeaudit --help`` lists every group from ``HELP`` without importing the group's module (the
modules import their analyses, hence pandas and scipy); each module's typer app takes its help from here, so the
listing and ``judgeaudit GROUP --help`` show one text."""

from __future__ import annotations

from judgeaudit.options import BLIND_SPOT, CAP_PAPER, CONSTRUCT_VALIDITY

GROUPS: dict[str, str] = {
    "validity": "judgeaudit.commands.validity",
    "vp": "judgeaudit.commands.vp",
    "cap": "judgeaudit.commands.cap",
    "datasets": "judgeaudit.commands.datasets",
    "probes": "judgeaudit.commands.probes",
    "check": "judgeaudit.commands.check",
    "certificate": "judgeaudit.commands.certificate",
    "ledger": "judgeaudit.commands.ledger",
    "card": "judgeaudit.commands.card",
    "loop": "judgeaudit.commands.loop",
    "world": "judgeaudit.commands.world",
    "calibrate": "judgeaudit.commands.calibrate",
    "batch": "judgeaudit.commands.batch",
    "requests": "judgeaudit.commands.requests",
    "templates": "judgeaudit.commands.templates",
    "migrate": "judgeaudit.commands.migrate",
}
"""Group name → the module whose typer app named ``app`` it is."""

HELP: dict[str, str] = {
    "validity": (f"Construct validity of a judge ({CONSTRUCT_VALIDITY} §2, §5.1–5.2): a valid judge keeps its "
                 "verdict under an edit that preserves the construct (invariance S) and changes it under a minimal "
                 "edit that changes the construct (sensitivity R); the (S, R) profile reports both, with intervals."),
    "vp": ("Validation power of label sets: could surface form alone reproduce the labels? "
           f"({CONSTRUCT_VALIDITY} Def. 6, App. E)"),
    "cap": f"Conditional accuracy profiles of pairwise judges ({CAP_PAPER})",
    "datasets": "Data-set adapters (specs NAME:PATH?options for --set).",
    "probes": f"Build probe sets and annotate their directions ({CONSTRUCT_VALIDITY} §4.1–4.2).",
    "check": "Score outputs with the checkers outside the loop (IFEval, GSM8K, HaluEval QA).",
    "certificate": "Certificates of the structural judge.",
    "ledger": (f"The prediction ledger ({BLIND_SPOT}, §3.8, App. A): commit predictions by hash, score them against "
               "runs."),
    "card": "The validity card of one judge, gathered from run folders.",
    "loop": "Close the loop: what acting on a judge's reports does, scored by a checker.",
    "world": "What a judge must be shown: blind vs informed arms, world variants, factorial.",
    "calibrate": ("The target quantity with an interval that carries the judge's errors (PPI++, Rogan–Gladen), from "
                  "verdicts plus a few human labels."),
    "batch": "Provider batch files (OpenAI Batch API, Anthropic Message Batches).",
    "requests": "The requests of an analysis, for your own harness (export), answered back through replay:.",
    "templates": "Judge templates: prompt, scale and reply format (built-in, or a YAML file).",
    "migrate": ("Judge migration: can the new judge replace the one being retired? EQUIVALENT, LINKABLE (after a "
                "monotone link), NOT_COMPARABLE or BLIND, from both judges' verdicts on your anchors."),
}
"""Group name → its help (the first paragraph is the top-level listing's line)."""
