"""The small sets the package carries (public-set slices whose licences permit it, and judgeaudit's own
JudgeBench-format fixture), as data-set specs for the demo."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"


def vp_demo_sets() -> list[str]:
    """Specs of the sets under ``judgeaudit/data/`` (each with its PROVENANCE.json naming its licence
    and how it was made): LLMBar (Natural, Adversarial, Processed MT-Bench slices), judgeaudit's own
    JudgeBench-format fixture (self-written pairs; JudgeBench itself is not shipped), and the
    provenance-inherited HaluEval QA slice."""
    specs = []
    if (DATA / "llmbar").is_dir():
        specs.append(f"llmbar:{DATA / 'llmbar'}?name=llmbar (slice)")
    if (DATA / "judgebench_fixture").is_dir():
        specs.append(f"judgebench:{DATA / 'judgebench_fixture'}?name=judgebench-format fixture")
    if (DATA / "halueval").is_dir():
        specs.append(f"halueval:{DATA / 'halueval'}?part=qa&name=halueval qa (slice, provenance)")
    return specs
