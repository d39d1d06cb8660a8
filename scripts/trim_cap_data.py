"""Build the trimmed LLMBar copy under src/judgeaudit/data/ (deterministic; LLMBar is MIT-licensed).

Usage: python scripts/trim_cap_data.py /path/to/shared/data

LLMBar: the first 10 items of Natural, Adversarial/Neighbor, GPTInst, GPTOut and Processed/
MT-Bench; result.json of modes Vanilla_NoRules and Swap for every evaluator shipped, restricted to
those items, keeping only label and results (the item texts are in dataset.json), prompts
dropped and completions cut to 300 characters.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "judgeaudit" / "data"


def trim_llmbar(src: Path) -> None:
    base = src / "Dataset"
    dst = OUT / "llmbar" / "Dataset"
    for rel in ("LLMBar/Natural", "LLMBar/Adversarial/Neighbor", "LLMBar/Adversarial/GPTInst",
                "LLMBar/Adversarial/GPTOut", "Processed/MT-Bench"):
        d = dst / rel
        d.mkdir(parents=True, exist_ok=True)
        items = json.loads((base / rel / "dataset.json").read_text())[:10]
        (d / "dataset.json").write_text(json.dumps(items, indent=1))
        for mode in ("Vanilla_NoRules", "Swap"):
            for f in sorted((base / rel / "evaluators").glob(f"*/{mode}/result.json")):
                res = [{"label": it["label"], "results": it["results"]}
                       for it in json.loads(f.read_text())[:10]]
                for it in res:
                    for rnd in it["results"]:
                        for side in rnd.values():
                            side.pop("prompt", None)
                            comp = side.get("completion")
                            if isinstance(comp, list) and comp and isinstance(comp[0], str):
                                side["completion"] = [comp[0][:300]] + comp[1:]
                o = dst / f.relative_to(base)
                o.parent.mkdir(parents=True, exist_ok=True)
                o.write_text(json.dumps(res))
    prov = json.loads((src / "PROVENANCE.json").read_text())
    prov.pop("files", None)
    prov["trimmed"] = __doc__
    (OUT / "llmbar" / "PROVENANCE.json").write_text(json.dumps(prov, indent=1))


if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")
    trim_llmbar(root / "llmbar")
