"""Every labelled set in the public data folder, as registry specs: one list for the tests that audit them all."""

from __future__ import annotations

from pathlib import Path

from judgeaudit.datasets import llmbar


def labelled_set_specs(d: Path) -> dict[str, str]:
    """display name → spec for every labelled set the registry can read from ``d``."""
    specs = {f"llmbar:{s}": f"llmbar:{d / 'llmbar'}?subset={s}" for s in llmbar.discover(d / "llmbar")}
    specs.update({
        "judgebench": f"judgebench:{d / 'judgebench'}",
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
