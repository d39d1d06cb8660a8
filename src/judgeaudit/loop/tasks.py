"""The loop's tasks: items with their world and units, read from the released files, and the
checker that scores an output outside the loop.

* ``ifeval``: units = the instruction's constraints (``"0:punctuation:no_comma"``); world = the
  instruction; checker = the released IFEval rules, strict (loose is reported beside it).
* ``gsm8k``: unit = ``answer``; world = the problem; checker = the answer key after ``####``.
* ``halueval_qa``: unit = ``answer``; world = the knowledge; the question is shown to every arm
  (the deployed case, §3.3); checker = containment of the right answer, then (with ``nli``, the
  paper's fallback, §11) entailment to it; ``Task.routes`` counts the checks each route decided.
  Records are read by the world adapter (``datasets.world_corpora.load_halueval``): one whose
  knowledge or an answer is empty is left out and counted in ``Task.excluded``.

``--max-items N`` keeps the first N items in file order (deterministic).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from judgeaudit.checkers.base import CheckResult
from judgeaudit.errors import InputError

TASKS = ("ifeval", "gsm8k", "halueval_qa")


@dataclass(frozen=True)
class LoopItem:
    """One task item: the request the responder answers, its world, and what the checker needs.

    Attributes:
        item_id: stable id within the task.
        request: the text the responder was asked to answer (the IFEval prompt, the problem, the question).
        world: what the output must respect (instruction, problem, knowledge).
        question: context every arm sees (HaluEval QA's question), else None.
        units: the checker's unit ids, in order.
        unit_text: unit id → a human description (for the certificate and reports).
        checked: the checker's own item (``IFEvalItem``, ``GSM8KItem``, ``HaluEvalQAItem``).
        shipped: a released initial output (GPT-4 on IFEval, GPT-3 on GSM8K), when there is one.
        extra: task-specific fields (HaluEval's hallucinated answer).
    """

    item_id: str
    request: str
    world: str
    question: str | None
    units: tuple[str, ...]
    unit_text: dict[str, str]
    checked: Any
    shipped: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Task:
    name: str
    items: tuple[LoopItem, ...]
    source: str

    nli: Any = None
    excluded: dict[str, int] = field(default_factory=dict)
    routes: Counter[str] = field(default_factory=Counter, compare=False)

    def check(self, item: LoopItem, output: str, *, mode: str = "strict") -> CheckResult:
        """Per-unit pass/fail of ``output`` (IFEval: ``mode`` strict or loose); HaluEval QA's
        checks are counted by the route that decided them (``routes``: unit detail → count)."""
        res = check(self.name, item, output, mode=mode, nli=self.nli)
        if self.name == "halueval_qa":
            self.routes.update(u.detail for u in res.units)
        return res


def check(task: str, item: LoopItem, output: str, *, mode: str = "strict", nli: Any = None) -> CheckResult:
    """The task's checker on one output; HaluEval QA takes the checker's optional NLI fallback
    (``nli(question, right_answer, output) -> bool``, see ``checkers.halueval_qa``)."""
    from judgeaudit.checkers import get_checker

    fn = get_checker(task)
    if task == "ifeval":
        return fn(item.checked, output, mode=mode)
    return fn(item.checked, output, nli=nli) if task == "halueval_qa" else fn(item.checked, output)


def _ifeval_unit_text(iid: str, args: dict[str, Any]) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items() if v is not None)
    return f"{iid}({shown})" if shown else iid


def load_ifeval(path: str | Path) -> Task:
    """``input_data.jsonl`` (or a folder holding it); shipped = the GPT-4 responses beside it, when
    present, joined by exact prompt text (a prompt edited after its response was written, key 2785 in
    Google's files, has no shipped output: ``shipped_only`` leaves it out and counts it)."""
    from judgeaudit.checkers.ifeval.data import join, read_items, read_responses
    from judgeaudit.checkers.ifeval.evaluate import unit_id

    p = Path(path)
    prompts = p / "input_data.jsonl" if p.is_dir() else p
    if not prompts.is_file():
        raise InputError("IFEval input_data.jsonl not found", path=p)
    items = read_items(prompts)
    shipped: dict[int, str] = {}
    resp = sorted(prompts.parent.glob("input_response_data_*.jsonl"))
    if resp:
        pairs, _ = join(items, read_responses(resp[0]), by="text", skip_missing=True, responses_path=resp[0])
        shipped = {it.key: r for it, r in pairs}
    out = []
    for _, it in items:
        units = tuple(unit_id(i, iid) for i, iid in enumerate(it.instruction_ids))
        text = {u: _ifeval_unit_text(iid, dict(a)) for u, iid, a in zip(units, it.instruction_ids, it.args,
                                                                         strict=True)}
        out.append(LoopItem(str(it.key), it.prompt, it.prompt, None, units, text, it, shipped.get(it.key)))
    return Task("ifeval", tuple(out), str(prompts))


GSM8K_SHIPPED = "175b_verification"
"""The GPT-3 condition whose solutions are the shipped initial outputs (``--initial shipped``;
``shipped:CONDITION`` picks another)."""


def load_gsm8k(path: str | Path, *, condition: str = GSM8K_SHIPPED) -> Task:
    """A GSM8K folder with ``test.jsonl`` (answer keys); shipped = ``condition``'s solutions from
    ``example_model_solutions.jsonl`` when present."""
    from judgeaudit.checkers.gsm8k import GSM8KItem
    from judgeaudit.datasets.gsm8k import SOLUTIONS_FILE, read_answer_keys, read_solutions

    p = Path(path)
    test = p / "test.jsonl" if p.is_dir() else p
    if not test.is_file():
        raise InputError("GSM8K test.jsonl not found", path=p)
    keys = read_answer_keys(test)
    shipped: dict[str, str] = {}
    if (test.parent / SOLUTIONS_FILE).is_file():
        for _, q, sols in read_solutions(test.parent):
            if condition not in sols:
                raise InputError(f"no solutions of condition {condition!r} (found: {', '.join(sols)})",
                                 path=test.parent / SOLUTIONS_FILE, field="initial")
            shipped[q] = sols[condition][1]
    out = [LoopItem(str(line), q, q, None, ("answer",), {"answer": "the final answer"},
                    GSM8KItem(str(line), q, key), shipped.get(q)) for line, q, key in keys]
    return Task("gsm8k", tuple(out), str(test))


def load_halueval_qa(path: str | Path, *, strategy: str = "one-turn") -> Task:
    """HaluEval QA items (knowledge, question, right answer, hallucinated answer) of the generation
    file of ``strategy`` (``one-turn`` by default, ``multi-turn``, ``final``) in any HaluEval folder
    or file (files found by their fields, ``datasets.halueval.pair_files``); a strategy not found is
    an error naming the ones found, never another file."""
    from judgeaudit.checkers.halueval_qa import HaluEvalQAItem
    from judgeaudit.datasets.world_corpora import load_halueval

    items, prov = load_halueval(path, part="qa", strategy=strategy)
    if not items:
        raise InputError("no usable HaluEval QA record (every record was left out: "
                         + "; ".join(f"{k}: {v}" for k, v in prov["excluded"].items()) + ")", path=prov["files"][0])
    out = []
    for right, fake in zip(items[::2], items[1::2], strict=True):
        line, q, r = str(right.meta["line"]), str(right.question), right.output
        out.append(LoopItem(line, q, str(right.world), q, ("answer",), {"answer": "the answer"},
                            HaluEvalQAItem(line, q, r), None, {"hallucinated_answer": fake.output, "right_answer": r}))
    return Task("halueval_qa", tuple(out), prov["files"][0], excluded=dict(prov["excluded"]))


_LOADERS = {"ifeval": load_ifeval, "gsm8k": load_gsm8k, "halueval_qa": load_halueval_qa}


NO_SHIPPED = "no shipped output with this prompt text (the prompt was edited after its response was written)"


def shipped_only(t: Task) -> Task:
    """``t`` without the items that have no shipped output, counted in ``excluded`` (``--initial shipped``);
    an error when none has one."""
    keep = tuple(it for it in t.items if it.shipped is not None)
    if not keep:
        raise InputError(f"no shipped output for any item of {t.name}; shipped outputs exist for IFEval (GPT-4) "
                         "and GSM8K (GPT-3)", field="--initial")
    if len(keep) == len(t.items):
        return t
    return replace(t, items=keep, excluded={**t.excluded, NO_SHIPPED: len(t.items) - len(keep)})


def load_task(name: str, data: str | Path, *, max_items: int | None = None, nli: Any = None, **kw: Any) -> Task:
    """The task ``name`` read from ``data``, trimmed to its first ``max_items`` items; ``nli`` is
    HaluEval QA's entailment fallback (None: containment alone)."""
    if name not in _LOADERS:
        raise InputError(f"unknown task {name!r} (known: {', '.join(TASKS)})", field="--task")
    t = _LOADERS[name](data, **kw)
    return Task(t.name, t.items[:max_items] if max_items is not None else t.items, t.source, nli, t.excluded)
