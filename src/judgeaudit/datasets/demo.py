"""The small public-set slices the package carries, as data-set specs for the demo."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"


def vp_demo_sets() -> list[str]:
    """Specs of the trimmed copies under ``judgeaudit/data/`` (each with its PROVENANCE.json
    saying how it was trimmed): LLMBar (Natural, Adversarial, Processed MT-Bench slices),
    JudgeBench, and the provenance-inherited HaluEval QA slice."""
    specs = []
    if (DATA / "llmbar").is_dir():
        specs.append(f"llmbar:{DATA / 'llmbar'}?name=llmbar (slice)")
    if (DATA / "judgebench").is_dir():
        specs.append(f"judgebench:{DATA / 'judgebench'}?name=judgebench (slice)")
    if (DATA / "halueval").is_dir():
        specs.append(f"halueval:{DATA / 'halueval'}?part=qa&name=halueval qa (slice, provenance)")
    return specs
