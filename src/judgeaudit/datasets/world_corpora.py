"""World adapters of the local corpora: HaluEval, FRANK, IFEval, GSM8K (blind-spot §3.2).

Each ``load_*`` returns ``(items, provenance)`` (:data:`judgeaudit.datasets.world.AdapterResult`)
and reuses its corpus's table adapter readers and, for the labels, the checkers
(:mod:`judgeaudit.checkers`), so the world analyses and the closed loop share one rule.

FRANK sentence rule. The public ``human_annotations.json`` holds one record per summary with
``Factuality`` = the share of the summary's sentences the annotators found free of error (the
per-annotator sentence file is not public). With ``n`` the number of sentences of the summary's
``<system>_lines`` split (the split FRANK annotated; ``(1 - Factuality)·n`` is a whole number for
all 2,246 records), the sentence labels are determined exactly when ``Factuality = 1`` (every
sentence clean), ``Factuality = 0`` (every sentence defective) or ``n = 1``; otherwise the count of
defective sentences is known but not which, and the summary is excluded (``undetermined=exclude``,
the default; ``keep`` keeps it with unit labels None and the item label ``defective``). A
defective sentence's ``kind`` lists (comma-separated, in ``FRANK_KINDS`` order) the error
categories whose summary-level share is 0, i.e. present in every sentence; categories present in
only some sentences cannot be placed and stay in ``meta['category_shares']``.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from typing import Any

from judgeaudit.datasets import frank, gsm8k, halueval
from judgeaudit.datasets._common import files_under, first_record, layout_error, read_json_array, require
from judgeaudit.datasets.world_base import AdapterResult, excluded, make_item
from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl
from judgeaudit.records import Span, Unit, WorldItem

# ---- HaluEval ------------------------------------------------------------------------------------

#: part → (world field, question field or None, task): what each paired HaluEval task is judged against.
HALUEVAL_WORLDS: dict[str, tuple[str, str | None, str]] = {
    "qa": ("knowledge", "question", "qa"),
    "dialogue": ("knowledge", "dialogue_history", "dialogue"),
    "summarization": ("document", None, "summarization"),
}


HALUEVAL_NO_WORLD = "the world ({field}) is missing or empty"
HALUEVAL_EMPTY_ANSWER = "the right or the hallucinated answer is empty"


def load_halueval(path: str | Path, *, part: str = "qa", strategy: str = "one-turn") -> AdapterResult:
    """HaluEval paired task ``part`` as world items: per record the right answer (clean) and the
    hallucinated answer (defective; its whole text is the gold span) as two outputs of one group.

    ``strategy`` picks the generation file (``one-turn`` by default, ``multi-turn``, or ``final``
    for the released ``qa_data.json``); it is recorded in every item's ``meta['variant']``. A record
    whose world is missing or empty, or with an empty answer, is left out (both its answers) and
    counted under ``excluded``."""
    if part not in HALUEVAL_WORLDS:
        raise InputError(f"HaluEval world part must be one of {', '.join(HALUEVAL_WORLDS)}, got {part!r}",
                         field="part")
    files = halueval.pair_files(path, part)
    p = halueval.PARTS[part]
    if not files:
        raise layout_error(f"no HaluEval {part} file (JSON Lines with {p.prompt}, {p.right}, {p.hallucinated}) "
                           "under this path", Path(path))
    if strategy not in files:
        raise InputError(f"HaluEval {part} strategy {strategy!r} not found; found: {', '.join(files)}", path=path,
                         field="strategy")
    world_key, q_key, task = HALUEVAL_WORLDS[part]
    f = files[strategy]
    counts: Counter[str] = Counter()
    items: list[WorldItem] = []
    n_records = 0
    for line, obj in iter_jsonl(f):
        n_records += 1
        for key in (p.prompt, p.right, p.hallucinated):
            require(obj, key, f, line)
        right, fake = str(obj[p.right]), str(obj[p.hallucinated])
        world = obj.get(world_key)
        if not isinstance(world, str) or not world.strip():
            counts[HALUEVAL_NO_WORLD.format(field=world_key)] += 1
            continue
        if not right.strip() or not fake.strip():
            counts[HALUEVAL_EMPTY_ANSWER] += 1
            continue
        group = f"halueval/{part}/{line}"
        for role, text, bad in (("right", right, False), ("hallucinated", fake, True)):
            items.append(make_item(
                path=f, line=line, world_field=world_key,
                item_id=f"{group}/{role}", task=task, output=text, world=world,
                question=str(obj[q_key]) if q_key else None, reference=right, defective=bad,
                spans=[Span(start=0, end=len(text), label="hallucination")] if bad else [],
                group=group, source_set=f"halueval_{part}",
                meta={"variant": strategy, "answer": role, "line": line}))
    return items, {"files": [str(f)], "name": f"halueval:{part}", "variant": strategy,
                   "variants_found": list(files), "n_records": n_records, "excluded": excluded(counts)}


# ---- FRANK ---------------------------------------------------------------------------------------

FRANK_KINDS = ("RelE", "EntE", "CircE", "OutE", "GramE", "CorefE", "LinkE", "Other")
"""FRANK's fine-grained error categories (Pagnoni et al. 2021): predicate, entity, circumstance,
out-of-article, grammatical, coreference, discourse link, other."""
REFERENCE_KEYS = ("{system}_reference", "Gold", "reference")
FRANK_NO_SUMMARY = "no summary record of the system with its article (the world)"
FRANK_NO_ARTICLE = "the article (the world) is empty"
UNDETERMINED = "sentence labels not determined by the summary-level annotation (0 < Factuality < 1, several sentences)"


def _sentences(value: Any) -> list[str] | None:
    """A ``*_lines`` field as a list of sentences (stored as a list or as its Python repr)."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return None
    if isinstance(value, list) and value and all(isinstance(s, str) for s in value):
        return value
    return None


def locate_sentences(text: str, sentences: list[str]) -> list[tuple[int, int]] | None:
    """``[start, end)`` of each sentence in ``text``: the sentences must cover ``text`` in order,
    compared character by character ignoring whitespace and case (FRANK's CNN/DM texts are
    lower-cased, their sentence splits are not); None when they do not."""
    pos, out = 0, []
    for s in sentences:
        chars = [c for c in s if not c.isspace()]
        if not chars:
            return None
        start = None
        for want in chars:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text) or text[pos].lower() != want.lower():
                return None
            if start is None:
                start = pos
            pos += 1
        out.append((start, pos))
    return out if not text[pos:].strip() else None


def _summaries(folder: Path, exclude: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(article hash, system) → ``text``, ``lines``, ``reference``, ``article`` and ``file``, from
    per-article records (``hash``, ``article`` and one field per system with ``<system>_lines``, as
    in ``articles.jsonl``) and per-summary records (``hash``, ``model_name``, ``summary``,
    ``article``, ``reference``, as in the repository's ``benchmark_data.json``; sentence split in
    ``summary_lines`` when present). The first source found for a summary wins."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for f in files_under(folder, (".json", ".jsonl")):
        if f == exclude:
            continue
        records = iter_jsonl(f) if f.suffix == ".jsonl" else ((None, o) for o in frank._records(f))
        for line, obj in records:
            if "hash" not in obj or "article" not in obj:
                continue
            h = str(obj["hash"])
            if "model_name" in obj:
                if isinstance(obj.get("summary"), str):
                    out.setdefault((h, str(obj["model_name"])), {
                        "text": obj["summary"], "lines": obj.get("summary_lines"), "reference": obj.get("reference"),
                        "article": obj["article"], "file": f, "line": line})
                continue
            for k, v in obj.items():
                if k != "article" and isinstance(v, str) and f"{k}_lines" in obj:
                    ref = next((obj[r.format(system=k)] for r in REFERENCE_KEYS
                                if isinstance(obj.get(r.format(system=k)), str)), None)
                    out.setdefault((h, k), {"text": v, "lines": obj[f"{k}_lines"], "reference": ref,
                                            "article": obj["article"], "file": f, "line": line})
    return out


def load_frank(path: str | Path, *, undetermined: str = "exclude") -> AdapterResult:
    """FRANK summaries as world items with sentence units (see the module docstring for the rule).
    An annotation whose summary or article (the world) is not in the summary records, or is empty,
    is left out and counted under ``excluded``."""
    if undetermined not in ("exclude", "keep"):
        raise InputError(f"undetermined must be exclude or keep, got {undetermined!r}", field="undetermined")
    root = Path(path)
    ann_path = frank.annotation_file(root)
    folder = root if root.is_dir() else ann_path.parent
    summaries = _summaries(folder, ann_path)
    if not summaries:
        raise layout_error("no FRANK summary records (articles.jsonl: hash, article, the systems' summaries and "
                           "their <system>_lines; or benchmark_data.json) under this folder", folder)
    counts: Counter[str] = Counter()
    items: list[WorldItem] = []
    files = {str(ann_path)}
    for i, obj in enumerate(read_json_array(ann_path)):
        for key in frank.ANNOTATION_FIELDS:
            if key not in obj:
                raise InputError(f"record {i}: required field is missing", path=ann_path, field=key)
        h, m, fact = str(obj["hash"]), str(obj["model_name"]), float(obj["Factuality"])
        if (h, m) not in summaries:
            counts[FRANK_NO_SUMMARY] += 1
            continue
        rec = summaries[(h, m)]
        if not isinstance(rec["article"], str) or not rec["article"].strip():
            counts[FRANK_NO_ARTICLE] += 1
            continue
        art_path, text = rec["file"], rec["text"]
        files.add(str(art_path))
        sents = _sentences(rec["lines"])
        if sents is None:
            counts["no sentence split of the summary"] += 1
            continue
        where = locate_sentences(text, sents)
        if where is None:
            counts["sentence split does not match the summary text"] += 1
            continue
        n = len(sents)
        n_err = round((1.0 - fact) * n)
        if abs((1.0 - fact) * n - n_err) > 1e-6:
            counts["Factuality is not a whole number of sentences"] += 1
            continue
        determined = fact in (0.0, 1.0) or n == 1
        if not determined and undetermined == "exclude":
            counts[UNDETERMINED] += 1
            continue
        always = ",".join(k for k in FRANK_KINDS if k in obj and float(obj[k]) == 0.0) or None
        bad = fact < 1.0
        units, spans = [], []
        for j, ((s, e), _) in enumerate(zip(where, sents, strict=True)):
            label = bad if determined else None
            units.append(Unit(unit_id=str(j), text=text[s:e], start=s, end=e, defective=label,
                              kind=always if label else None))
            if label:
                spans.append(Span(start=s, end=e, label=always))
        items.append(make_item(
            path=art_path, line=rec["line"], world_field="article",
            item_id=f"frank/{h}/{m}", task="summarization", output=text, world=rec["article"],
            reference=rec["reference"], defective=bad, units=units, spans=spans, group=h, source_set="frank",
            meta={"system": m, "dataset": obj.get("dataset"), "split": obj.get("split"), "factuality": fact,
                  "n_sentences": n, "n_error_sentences": n_err, "sentences_determined": determined,
                  "category_shares": {k: float(obj[k]) for k in FRANK_KINDS if k in obj}, "record": i}))
    return items, {"files": sorted(files), "n_records": sum(counts.values()) + len(items),
                   "sentence_rule": "exact when Factuality is 0 or 1 or the summary has one sentence",
                   "undetermined": undetermined, "excluded": excluded(counts),
                   "n_sentences": sum(len(it.units) for it in items),
                   "n_error_sentences": sum(bool(u.defective) for it in items for u in it.units)}


# ---- IFEval --------------------------------------------------------------------------------------


def render_constraint(instruction_id: str, args: dict[str, Any]) -> str:
    """A constraint as text: its instruction id and parameters, ``id (name=value; …)``."""
    if not args:
        return instruction_id
    parts = [f"{k}={', '.join(v) if isinstance(v, tuple) else v}" for k, v in args.items()]
    return f"{instruction_id} ({'; '.join(parts)})"


def _ifeval_files(path: str | Path, responses: str | None) -> tuple[Path, Path]:
    root = Path(path)
    if not root.exists():
        raise InputError("IFEval folder not found", path=root)
    folder = root if root.is_dir() else root.parent
    if root.is_file():
        prompts = root
    else:
        found = [f for f in files_under(root, (".jsonl",)) if "instruction_id_list" in (first_record(f) or {})]
        if len(found) != 1:
            raise layout_error("expected one IFEval prompt file (JSON Lines with key, prompt, instruction_id_list, "
                               f"kwargs), found {len(found)}", root)
        prompts = found[0]
    if responses is not None:
        resp = Path(responses)
        resp = resp if resp.is_absolute() or resp.exists() else folder / resp
        if not resp.is_file():
            raise InputError("IFEval response file not found", path=resp, field="responses")
        return prompts, resp
    found = [f for f in files_under(folder, (".jsonl",))
             if {"prompt", "response"} <= set(first_record(f) or {})]
    if len(found) != 1:
        raise layout_error(f"expected one IFEval response file (JSON Lines with prompt, response), found {len(found)};"
                           " name one with responses=FILE", folder)
    return prompts, found[0]


IFEVAL_NO_RESPONSE = "no response with the prompt's text (join=position joins by line)"


def load_ifeval(path: str | Path, *, responses: str | None = None, mode: str = "strict",
                join: str = "text") -> AdapterResult:
    """IFEval paired detection: per prompt, its response as the output, the instruction as the
    world and one unit per constraint (``kind`` = instruction id; ``defective`` = not followed by
    the IFEval checker in ``mode``, strict by default). Responses are joined by prompt text; a
    prompt without one is excluded (its key in ``missing_keys``) unless ``join=position`` joins it
    to the response on its line (``checkers.ifeval.data.join``)."""
    from judgeaudit.checkers.ifeval import check_ifeval
    from judgeaudit.checkers.ifeval.data import join as join_responses
    from judgeaudit.checkers.ifeval.data import read_items, read_responses

    prompts, resp = _ifeval_files(path, responses)
    read = read_items(prompts)
    lines = {it.key: line for line, it in read}
    pairs, fallbacks = join_responses(read, read_responses(resp), by=join, skip_missing=True, responses_path=resp)
    joined = {it.key for it, _ in pairs}
    missing = [it.key for _, it in read if it.key not in joined]
    items: list[WorldItem] = []
    for it, response in pairs:
        result = check_ifeval(it, response, mode=mode)  # type: ignore[arg-type]
        units = [Unit(unit_id=u.unit, text=render_constraint(iid, dict(args)), defective=not u.passed, kind=iid)
                 for u, iid, args in zip(result.units, it.instruction_ids, it.args, strict=True)]
        items.append(make_item(
            path=prompts, line=lines[it.key], world_field="prompt",
            item_id=f"ifeval/{it.key}", task="instruction", output=response, world=it.prompt,
            defective=not result.passed, units=units, group=str(it.key), source_set="ifeval",
            meta={"key": it.key, "checker_mode": mode, "responses_file": resp.name}))
    return items, {"files": [str(prompts), str(resp)], "checker": f"judgeaudit.checkers.ifeval ({mode})",
                   "join": join, "joined_by_position": [f.to_dict() for f in fallbacks], "missing_keys": missing,
                   "excluded": excluded({IFEVAL_NO_RESPONSE: len(missing)}),
                   "n_constraints": sum(len(it.units) for it in items),
                   "n_violated": sum(bool(u.defective) for it in items for u in it.units)}


# ---- GSM8K ---------------------------------------------------------------------------------------

REFERENCE_FIELDS = ("ground_truth", "answer")
"""Where a solutions record keeps its reference solution (OpenAI's file: ``ground_truth``, ending in
``A: <number>``; ``test.jsonl``'s form: ``answer``, ending in ``#### <number>``)."""


def load_gsm8k(path: str | Path, *, conditions: str | None = None) -> AdapterResult:
    """GSM8K worked solutions as world items: world = the problem, output = a model's solution,
    reference = the reference solution, ``defective`` = the GSM8K checker finds the final number
    differs from the answer key (read from the record's reference solution). ``conditions``
    (comma-separated) keeps only those solution fields."""
    from judgeaudit.checkers.gsm8k import GSM8KItem, answer_key, check_gsm8k

    sol_path = gsm8k._solutions_path(path)
    records = gsm8k.read_solutions(path)
    found = list(records[0][2])
    chosen = [c.strip() for c in conditions.split(",")] if conditions else found
    unknown = [c for c in chosen if c not in found]
    if unknown:
        raise InputError(f"unknown condition(s) {', '.join(unknown)}; found: {', '.join(found)}", field="conditions")
    refs = {line: next((str(obj[k]) for k in REFERENCE_FIELDS if k in obj), None) for line, obj in iter_jsonl(sol_path)}
    items: list[WorldItem] = []
    agree = 0
    for line, question, sols in records:
        ref = refs[line]
        if ref is None:
            raise InputError("required field is missing (the reference solution with the answer key)",
                             path=sol_path, line=line, field=REFERENCE_FIELDS[0])
        try:
            key = answer_key(ref)
        except InputError as e:
            raise InputError(e.message, path=sol_path, line=line, field=REFERENCE_FIELDS[0]) from None
        task_item = GSM8KItem(id=str(line), question=question, answer=key)
        for c in chosen:
            flag, text = sols[c]
            unit = check_gsm8k(task_item, text).units[0]
            agree += unit.passed == flag
            items.append(make_item(
                path=sol_path, line=line, world_field="question",
                item_id=f"gsm8k/{line}/{c}", task="math", output=text, world=question, reference=ref,
                defective=not unit.passed, group=f"gsm8k/{line}", source_set="gsm8k",
                meta={"condition": c, "answer_key": str(key), "checker": unit.detail, "is_correct_flag": flag,
                      "line": line}))
    return items, {"files": [str(sol_path)], "conditions": chosen, "excluded": {},
                   "label_rule": "judgeaudit.checkers.gsm8k: final number vs the answer key of the reference solution",
                   "agreement_with_is_correct": {"agree": agree, "total": len(items)}}
