"""Build the trimmed JudgeBench and LLMBar copies under src/judgeaudit/data/ (deterministic).

Usage: python scripts/trim_cap_data.py /path/to/shared/data

JudgeBench: per response model, the first 5 pairs of each category in file order (40 pairs);
every output file restricted to those pairs, keeping pair_id, label, source, judge_name and
judgments, with judgment.prompt blanked and judgment.response cut to 1,200 characters.
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


def cat(source: str) -> str:
    if source.startswith("mmlu-pro"):
        return "knowledge"
    return source


def trim_judgebench(src: Path) -> None:
    dst = OUT / "judgebench"
    (dst / "data").mkdir(parents=True, exist_ok=True)
    (dst / "outputs").mkdir(parents=True, exist_ok=True)
    keep: set[str] = set()
    for f in sorted((src / "data").glob("*.jsonl")):
        rows = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
        seen: dict[str, int] = {}
        out = []
        for r in rows:
            c = cat(r["source"])
            if seen.get(c, 0) < 5:
                seen[c] = seen.get(c, 0) + 1
                out.append(r)
                keep.add(r["pair_id"])
        (dst / "data" / f.name).write_text("".join(json.dumps(r) + "\n" for r in out))
    for f in sorted((src / "outputs").glob("*.jsonl")):
        out = []
        for x in f.read_text().splitlines():
            r = json.loads(x)
            if r["pair_id"] not in keep:
                continue
            games = []
            for g in r["judgments"]:
                if g is not None:
                    j = dict(g["judgment"])
                    j["prompt"] = ""
                    j["response"] = (j.get("response") or "")[:1200]
                    g = {"judgment": j, "decision": g["decision"]}
                games.append(g)
            out.append({"pair_id": r["pair_id"], "label": r["label"], "source": r["source"],
                        "judge_name": r["judge_name"], "judgments": games})
        (dst / "outputs" / f.name).write_text("".join(json.dumps(r) + "\n" for r in out))
    prov = json.loads((src / "PROVENANCE.json").read_text())
    prov["trimmed"] = __doc__
    (dst / "PROVENANCE.json").write_text(json.dumps(prov, indent=1))


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
    trim_judgebench(root / "judgebench")
    trim_llmbar(root / "llmbar")
