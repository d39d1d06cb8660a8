"""Every labelled set in the public data folder, as registry specs: one list for the tests that audit them all."""

from __future__ import annotations

from pathlib import Path

from judgeaudit.datasets import llmbar


JUDGEBENCH_MODELS = ("claude-3-5-sonnet-20240620", "gpt-4o-2024-05-13")


def labelled_set_specs(d: Path) -> dict[str, str]:
    """display name → spec for every labelled set the registry can read from ``d``."""
    specs = {f"llmbar:{s}": f"llmbar:{d / 'llmbar'}?subset={s}" for s in llmbar.discover(d / "llmbar")}
    # JudgeBench's two response models are two sets (``registry.load_sets``)
    specs.update({f"judgebench:{m}": f"judgebench:{d / 'judgebench'}?response_model={m}" for m in JUDGEBENCH_MODELS})
    specs.update({
        "rm_bench": f"rm_bench:{d / 'rm_bench'}",
        "mt_bench": f"mt_bench:{d / 'mt_bench'}",
        "halueval:qa": f"halueval:{d / 'halueval'}?part=qa",
        "halueval:general": f"halueval:{d / 'halueval'}?part=general",
        "frank": f"frank:{d / 'frank'}",
        "gsm8k:items": f"gsm8k:{d / 'gsm8k'}?part=items",
        "gsm8k:pairs": f"gsm8k:{d / 'gsm8k'}?part=pairs",
    })
    return specs


def trimmed(spec: str, max_rows: int) -> str:
    """``spec`` with ``max_rows`` added to its options."""
    return spec + ("&" if "?" in spec else "?") + f"max_rows={max_rows}"
