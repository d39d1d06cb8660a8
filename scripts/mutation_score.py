"""Mutation score of judgeaudit's decision modules against their fast tests.

Run from the repository root (the module's fast tests run with the package imported from a mutated copy
of ``src/``; the working tree is never written):

    PYTHONPATH=src python scripts/mutation_score.py                 # every module, 40 mutants each, seed 0
    python scripts/mutation_score.py --module gate/evaluate.py      # one module
    python scripts/mutation_score.py --per-module 40 --seed 0 --jobs 2 --json out.json

For each module in ``MODULES`` it parses the source with ``ast``, lists every mutation point in a
stable order (source position, then operator), draws ``--per-module`` of them with
``random.Random(seed).sample``, and for each mutant writes the mutated module into a temporary copy
of ``src/`` and runs that module's fast tests (``MODULES[module]``: the smallest set of quick test
files, or test ids, that exercise it) with ``pytest -x -q -p no:cacheprovider`` and that copy first on
``sys.path`` and ``PYTHONPATH``: in a child forked from this runner, which has imported the heavy
third-party libraries once (``PRELOAD``), so a mutant costs its tests, not an interpreter start-up
(``--jobs`` children at once, each with its own copy of ``src/``; the child imports judgeaudit afresh). A mutant is **killed** when the tests fail or time out (a mutant that loops forever is
caught by the timeout, as mutmut counts it), **survives** when they pass. Mutants listed in
``mutation_equivalent.json`` (beside this script; each with the reason it cannot change behaviour)
are left out of the denominator: the score is the share of non-equivalent mutants killed.

Mutation operators: a comparison swapped (``<`` ↔ ``<=``, ``>`` ↔ ``>=``, ``==`` ↔ ``!=``, ``in`` ↔
``not in``, ``is`` ↔ ``is not``); an arithmetic operator swapped (``+`` ↔ ``-``, ``*`` ↔ ``/``, ``//``
→ ``/``, ``**`` → ``*``, ``%`` → ``*``, ``&`` ↔ ``|``), also in augmented assignments; a number
changed (0 → 1, 1 → 0, n → n + 1) and ``True`` ↔ ``False``; ``and`` ↔ ``or``; a unary ``not`` or
``-`` removed; a returned value replaced by ``None``; a statement-level call removed (``pass``).
Docstrings and the text of f-strings (messages) are not mutated. Before the mutants, the unmutated
copy must pass the same tests (else the module is reported as not measurable).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from queue import Queue

ROOT = Path(__file__).resolve().parent.parent
PKG = "src/judgeaudit"

MODULES: dict[str, list[str]] = {
    "card/paired.py": [
        "tests/card/test_card_paired_units.py",
        "tests/card/test_card_diff.py::test_card_diff_cli_on_two_cards",
        "tests/card/test_card_diff.py::test_each_quantity_appears_once_in_a_diff",
        "tests/card/test_card_diff_tau.py::test_a_judge_one_grade_harsher_is_unchanged",
        "tests/card/test_card_diff_tau.py::test_each_run_is_read_at_its_own_matched_point",
    ],
    "gate/quantities.py": ["tests/gate/test_gate_readers.py", "tests/gate/test_gate.py", "-k",
                           "not replayed_validity_run"],
    "analyses/calibrate/ppi.py": ["tests/analyses/calibrate/test_ppi_edges.py", "tests/analyses/calibrate/test_ppi.py"],
    "analyses/calibrate/rogan_gladen.py": ["tests/analyses/calibrate/test_rogan_gladen_edges.py",
                                           "tests/analyses/calibrate/test_rogan_gladen.py"],
    "gate/evaluate.py": ["tests/gate/test_gate_readers.py", "tests/gate/test_gate.py", "-k",
                         "not replayed_validity_run"],
    "stats/tests.py": ["tests/stats/test_tests_edges.py", "tests/stats/test_stats_edges_more.py",
                       "tests/stats/test_spearman.py"],
    "stats/paired.py": ["tests/stats/test_tests_edges.py", "tests/stats/test_stats_edges_more.py",
                        "tests/stats/test_paired_shapley.py"],
}
"""Module (under ``src/judgeaudit``) → the pytest arguments of its fast tests."""

EQUIVALENT = Path(__file__).with_name("mutation_equivalent.json")

_CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
        ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
        ast.Pow: ast.Mult, ast.Mod: ast.Mult, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd}
_SYM = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.In: "in",
        ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
        ast.Div: "/", ast.FloorDiv: "//", ast.Pow: "**", ast.Mod: "%", ast.BitAnd: "&", ast.BitOr: "|"}


@dataclass(frozen=True)
class Point:
    """One mutation: node ``node`` (its index in ``ast.walk`` order of a fresh parse), what is done to it."""

    node: int
    kind: str
    arg: int
    line: int
    col: int
    text: str

    @property
    def key(self) -> str:
        return f"{self.line}:{self.col}: {self.text}"


def _skipped(tree: ast.Module) -> set[int]:
    """ids of nodes never mutated: docstrings, f-string text, annotations."""
    skip: set[int] = set()
    for n in ast.walk(tree):
        body = getattr(n, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            skip.update(id(x) for x in ast.walk(body[0]))
        if isinstance(n, ast.JoinedStr):
            skip.update(id(x) for x in ast.walk(n))
        for ann in (getattr(n, "annotation", None), getattr(n, "returns", None)):
            if ann is not None:
                skip.update(id(x) for x in ast.walk(ann))
    # a string statement after an assignment documents it (attribute docstrings)
    for n in ast.walk(tree):
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str):
            skip.update(id(x) for x in ast.walk(n))
    return skip


def points(source: str) -> list[Point]:
    tree = ast.parse(source)
    skip = _skipped(tree)
    out: list[Point] = []
    for i, n in enumerate(ast.walk(tree)):
        if id(n) in skip:
            continue
        line, col = getattr(n, "lineno", 0), getattr(n, "col_offset", 0)
        seg = (ast.get_source_segment(source, n) or "").splitlines()[0][:60] if hasattr(n, "lineno") else ""
        if isinstance(n, ast.Compare):
            for k, op in enumerate(n.ops):
                if type(op) in _CMP:
                    out.append(Point(i, "cmp", k, line, col, f"{_SYM[type(op)]} → {_SYM[_CMP[type(op)]]} in `{seg}`"))
        elif isinstance(n, ast.BinOp | ast.AugAssign) and type(n.op) in _BIN:
            out.append(Point(i, "bin", 0, line, col, f"{_SYM[type(n.op)]} → {_SYM[_BIN[type(n.op)]]} in `{seg}`"))
        elif isinstance(n, ast.BoolOp):
            new = "or" if isinstance(n.op, ast.And) else "and"
            out.append(Point(i, "bool", 0, line, col, f"{'and' if new == 'or' else 'or'} → {new} in `{seg}`"))
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not | ast.USub):
            out.append(Point(i, "unary", 0, line, col, f"drop `{'not' if isinstance(n.op, ast.Not) else '-'}` in `{seg}`"))
        elif isinstance(n, ast.Constant) and not isinstance(n.value, str | bytes) and n.value is not None \
                and n.value is not Ellipsis:
            v = n.value
            new = (not v) if isinstance(v, bool) else 1 if v == 0 else 0 if v == 1 else v + 1
            if not isinstance(v, complex):
                out.append(Point(i, "const", 0, line, col, f"{v!r} → {new!r} in `{seg}`"))
        elif isinstance(n, ast.Return) and n.value is not None \
                and not (isinstance(n.value, ast.Constant) and n.value.value is None):
            out.append(Point(i, "return", 0, line, col, f"return None instead of `{seg}`"))
        elif isinstance(n, ast.Expr) and isinstance(n.value, ast.Call):
            out.append(Point(i, "call", 0, line, col, f"drop the call `{seg}`"))
    out.sort(key=lambda p: (p.line, p.node, p.arg))
    return out


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for j, x in enumerate(value):
                    if x is old:
                        value[j] = new
                        return
    raise LookupError("node not found")


def mutate(source: str, p: Point) -> str:
    tree = ast.parse(source)
    n = list(ast.walk(tree))[p.node]
    if p.kind == "cmp":
        n.ops[p.arg] = _CMP[type(n.ops[p.arg])]()
    elif p.kind == "bin":
        n.op = _BIN[type(n.op)]()
    elif p.kind == "bool":
        n.op = ast.Or() if isinstance(n.op, ast.And) else ast.And()
    elif p.kind == "unary":
        _replace(tree, n, n.operand)
    elif p.kind == "const":
        v = n.value
        n.value = (not v) if isinstance(v, bool) else 1 if v == 0 else 0 if v == 1 else v + 1
    elif p.kind == "return":
        n.value = ast.Constant(None)
    elif p.kind == "call":
        _replace(tree, n, ast.Pass())
    return ast.unparse(ast.fix_missing_locations(tree))


PRELOAD = ("numpy", "pandas", "scipy.stats", "scipy.special", "statsmodels.stats.proportion",
           "statsmodels.stats.multitest", "pyarrow.parquet", "pydantic", "typer", "typer.testing", "jinja2.sandbox",
           "yaml", "pytest")
"""Third-party modules imported once by the runner, before it forks a child per mutant (judgeaudit itself is
imported afresh by each child, from its copy of ``src/``)."""


class _Trace:
    """A pytest plugin writing, line by line, each test it starts and each that fails (``START``/``FAIL`` nodeid),
    so the runner knows which tests killed a mutant, or were running when it timed out."""

    def __init__(self, path: Path) -> None:
        self.f = open(path, "w", encoding="utf-8")  # noqa: SIM115

    def pytest_runtest_logstart(self, nodeid, location):  # noqa: ANN001, ARG002
        self.f.write(f"START {nodeid}\n")
        self.f.flush()

    def pytest_runtest_logreport(self, report):  # noqa: ANN001
        if report.failed:
            self.f.write(f"FAIL {report.nodeid}\n")
            self.f.flush()

    def pytest_collectreport(self, report):  # noqa: ANN001
        if report.failed:
            self.f.write(f"FAIL {report.nodeid}\n")
            self.f.flush()


def _child(src: Path, args: list[str]) -> int:
    """In a forked child: judgeaudit from ``src`` (first on ``sys.path`` and on ``PYTHONPATH`` for any subprocess
    a test starts), then pytest on ``args``; output discarded."""
    os.environ.update(PYTHONPATH=str(src), PYTHONDONTWRITEBYTECODE="1")
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(src))
    os.chdir(ROOT)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    import judgeaudit

    if not Path(judgeaudit.__file__).resolve().is_relative_to(src.resolve()):
        return 99
    import pytest

    return int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", *args], plugins=[_Trace(src.parent / "trace")]))


def _fork(src: Path, args: list[str]) -> int:
    pid = os.fork()
    if pid == 0:                                              # pragma: no cover - the child
        code = 98
        try:
            code = _child(src, args)
        finally:
            os._exit(code)
    return pid


def _wait(pid: int, timeout: float) -> str:
    """'passed', 'failed' or 'timeout' for child ``pid``."""
    t0 = time.monotonic()
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            if code == 99:
                raise SystemExit("the child imported judgeaudit from outside its copy of src/")
            return "passed" if code == 0 else "failed"
        if time.monotonic() - t0 > timeout:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(0.1)


def run_tests(src: Path, args: list[str], timeout: float) -> tuple[str, float]:
    """'passed', 'failed' or 'timeout', and the seconds taken."""
    t0 = time.monotonic()
    state = _wait(_fork(src, args), timeout)
    return state, time.monotonic() - t0


def _copy_src(into: Path) -> Path:
    shutil.copytree(ROOT / "src", into / "src", ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    return into / "src"


def _ordered(args: list[str], added: tuple[str, ...]) -> list[str]:
    """``args`` with the ``added`` test files last (so a mutant the other tests kill stops before them)."""
    return [a for a in args if not a.startswith(added) or not added] + [a for a in args if added and a.startswith(added)]


def _run_pool(chosen: list[Point], mod: str, path: str, source: str, timeout: float, workers: Queue[Path],
              eq: dict, added: tuple[str, ...] = (), log: Path | None = None) -> list[dict]:
    """Every mutant of ``chosen``, up to one per worker copy of ``src/`` at a time (a forked child each)."""
    todo, running, got = list(chosen), {}, {}
    while todo or running:
        while todo and not workers.empty():
            p = todo.pop(0)
            src = workers.get()
            (src / path.removeprefix("src/")).write_text(mutate(source, p), encoding="utf-8")
            (src.parent / "trace").unlink(missing_ok=True)
            running[_fork(src, _ordered(MODULES[mod], added))] = (p, src, time.monotonic())
        for pid, (p, src, t0) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            over = time.monotonic() - t0 > timeout
            if not done and not over:
                continue
            if not done:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                state = "timeout"
            else:
                code = os.waitstatus_to_exitcode(status)
                if code == 99:
                    raise SystemExit("the child imported judgeaudit from outside its copy of src/")
                state = "passed" if code == 0 else "failed"
            secs = time.monotonic() - t0
            trace = (src.parent / "trace").read_text(encoding="utf-8").splitlines() \
                if (src.parent / "trace").is_file() else []
            fails = [t.split(" ", 1)[1] for t in trace if t.startswith("FAIL ")]
            last = ([t.split(" ", 1)[1] for t in trace if t.startswith("START ")] or [""])[-1]
            by = (fails[0] if fails else last if state == "timeout" else "")
            (src / path.removeprefix("src/")).write_text(source, encoding="utf-8")
            workers.put(src)
            del running[pid]
            status_ = "killed" if state in ("failed", "timeout") else "survived"
            killed_before = status_ == "killed" and not any(by.startswith(a) for a in added)
            reason = eq.get((mod, p.key))
            print(f"  {mod}:{p.key} — {status_}{' (timeout)' if state == 'timeout' else ''}"
                  f"{' [equivalent]' if reason else ''} ({secs:.0f}s){' by ' + by if by else ''}", flush=True)
            got[p] = {"module": mod, "line": p.line, "mutation": p.key, "status": status_, "by": by,
                      "killed_without_added": killed_before, "added": list(added),
                      "timeout": state == "timeout", "equivalent": reason, "seconds": round(secs, 1)}
            if log is not None:
                with log.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(got[p], ensure_ascii=False) + "\n")
        time.sleep(0.1)
    return [got[p] for p in chosen]


def _kept(g: dict, added: tuple[str, ...]) -> dict | None:
    """An earlier run's killed mutant ``g`` as this run reports it, its ``killed_without_added`` judged
    against this run's ``added`` files (not the earlier run's, which may have named none); ``None`` when that
    cannot be told from it (a test of an added file killed it first, but that run did not run the added files
    last, or it recorded no killing test): such a mutant is run again."""
    by = g.get("by") or ""
    if not added:
        return {**g, "killed_without_added": True, "added": []}
    if not by:
        return None
    if not by.startswith(added):
        return {**g, "killed_without_added": True, "added": list(added)}
    if set(added) <= set(g.get("added") or ()):
        return {**g, "killed_without_added": False, "added": list(added)}
    return None


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def table(results: list[dict], opts: argparse.Namespace) -> int:
    """The score table of outcomes (the equivalent list read now, so a mutant found equivalent later is left out)."""
    eq = {(e["module"], e["mutation"]): e["reason"] for e in json.loads(EQUIVALENT.read_text(encoding="utf-8"))}
    print(f"{'module':40} {'run':>4} {'equiv':>5} {'killed':>6} {'of':>4} {'%':>6} {'w/o added':>9} {'%':>6}")
    for mod in dict.fromkeys(g["module"] for g in results):
        got = {g["mutation"]: g for g in results if g["module"] == mod}          # the last outcome of each mutant
        live = [g for k, g in got.items() if (mod, k) not in eq]
        k = sum(g["status"] == "killed" for g in live)
        w = sum(bool(g.get("killed_without_added")) for g in live)
        pct = lambda x: 100 * x / len(live) if live else float("nan")  # noqa: E731
        print(f"{mod:40} {len(got):4d} {len(got) - len(live):5d} {k:6d} {len(live):4d} {pct(k):6.1f} {w:9d} "
              f"{pct(w):6.1f}")
    print("\nsurvivors (non-equivalent; each mutant's last outcome):")
    last = {(g["module"], g["mutation"]): g for g in results}
    for (mod, key), g in last.items():
        if g["status"] == "survived" and (mod, key) not in eq:
            print(f"  {mod}:{key}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--module", action="append", help="a module of MODULES (default: all)")
    ap.add_argument("--per-module", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2, help="mutants run at once (each in its own copy of src/)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds per mutant (default: 4 × the unmutated run's time, at least 120)")
    ap.add_argument("--json", type=Path, help="append every mutant's outcome here as it is known (JSON lines)")
    ap.add_argument("--table", type=Path, nargs="+", help="only print the table of earlier --json files")
    ap.add_argument("--added", action="append", help="a test file added since a baseline (repeatable): run last, "
                    "and the table also gives the score without the added files (the mutants the other tests kill)")
    ap.add_argument("--rerun", type=Path, help="a --json file of an earlier run: run again only its survivors "
                    "and the mutants it did not reach (its killed mutants are reported as they were, their "
                    "'w/o added' judged against this run's --added files; one an added file killed first in a "
                    "run that did not run the added files last is run again; tests are only ever added)")
    opts = ap.parse_args(argv)
    if opts.table:
        return table([g for f in opts.table for g in _lines(f)], opts)
    equivalent = json.loads(EQUIVALENT.read_text(encoding="utf-8")) if EQUIVALENT.is_file() else []
    eq = {(e["module"], e["mutation"]): e["reason"] for e in equivalent}
    modules = opts.module or list(MODULES)
    for name in PRELOAD:
        __import__(name)
    t_start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="judgeaudit-mut-") as tmp:
        workers: Queue[Path] = Queue()
        for j in range(max(1, opts.jobs)):
            workers.put(_copy_src(Path(tmp) / f"w{j}"))
        rows, results = [], []
        for mod in modules:
            path = f"{PKG}/{mod}"
            source = (ROOT / path).read_text(encoding="utf-8")
            pts = points(source)
            chosen = random.Random(opts.seed).sample(pts, min(opts.per_module, len(pts)))   # run in this order: a
            # run stopped early has measured a random subset of the sample
            kept, before = [], {}
            if opts.rerun:        # the earlier run's killed mutants are kept; the others (non-equivalent) run
                before = {(g["module"], g["mutation"]): g for g in _lines(opts.rerun) if g["module"] == mod}
                added = tuple(opts.added or ())
                again = []
                for p in chosen:
                    g = before.get((mod, p.key))
                    k = _kept(g, added) if g and g["status"] == "killed" else None
                    if k is not None:
                        kept.append(k)
                    elif (mod, p.key) not in eq:
                        again.append(p)
                chosen = again
            if opts.json and kept:
                with opts.json.open("a", encoding="utf-8") as fh:
                    fh.writelines(json.dumps(g, ensure_ascii=False) + "\n" for g in kept)
            state, took = "passed", 100.0
            if not before:        # (a rerun of a module the earlier run measured skips this: that run checked it)
                base_src = workers.get()
                state, took = run_tests(base_src, MODULES[mod], 1800)
                workers.put(base_src)
            if state != "passed":
                print(f"{mod}: its fast tests do not pass unmutated ({state}); not measured", flush=True)
                continue
            timeout = opts.timeout or max(300.0 if before else 120.0, 4 * took)

            got = kept + _run_pool(chosen, mod, path, source, timeout, workers, eq, tuple(opts.added or ()),
                                   opts.json)
            for g in got:
                g["equivalent"] = eq.get((mod, g["mutation"]))
            results += got
            live = [g for g in got if not g["equivalent"]]
            killed = sum(g["status"] == "killed" for g in live)
            without = sum(bool(g.get("killed_without_added")) for g in live)
            rows.append((mod, killed, len(live), len(got) - len(live), len(pts), without))
    print(f"\nmutation score (seed {opts.seed}, {opts.per_module} per module; equivalent mutants excluded)")
    print(f"{'module':40} {'killed':>6} {'total':>6} {'%':>6} {'equiv':>6} {'points':>7}"
          + (f" {'killed w/o added':>17} {'%':>6}" if opts.added else ""))
    for mod, k, t, e, n, w in rows:
        print(f"{mod:40} {k:6d} {t:6d} {100 * k / t if t else float('nan'):6.1f} {e:6d} {n:7d}"
              + (f" {w:17d} {100 * w / t if t else float('nan'):6.1f}" if opts.added else ""))
    print("\nsurvivors (non-equivalent):")
    for g in results:
        if g["status"] == "survived" and not g["equivalent"]:
            print(f"  {g['module']}:{g['mutation']}")
    print(f"\n{len(results)} mutants in {time.monotonic() - t_start:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
