"""The factorial design of a world run (blind-spot §6): the 2^k cells of question × source × typed
(× instrument), the arm of each cell, and the exact Shapley value of each factor per metric."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

from judgeaudit.analyses.world.analysis import Analysis, jsonable
from judgeaudit.errors import InputError
from judgeaudit.stats.paired import METRICS
from judgeaudit.stats.shapley import cells as factorial_cells
from judgeaudit.stats.shapley import shapley

FACTORS = ("question", "source", "typed", "instrument")


def cell_name(question: bool, source: bool, typed: bool) -> str:
    """The arm of a factorial cell: ``Q<0|1>S<0|1>T<0|1>``."""
    return f"Q{int(question)}S{int(source)}T{int(typed)}"


def parse_factors(text: str) -> list[str]:
    fs = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in fs if f not in FACTORS]
    if bad or not fs or len(set(fs)) != len(fs):
        raise InputError(f"factors must be distinct names from {', '.join(FACTORS)}; got {text!r}",
                         field="--factors")
    return fs


def factorial_arms(factors: Sequence[str]) -> dict[frozenset[str], str]:
    """The arm of each cell (factors outside the design stay off; the instrument picks the judge)."""
    qst = [f for f in factors if f != "instrument"]
    out = {}
    for on in product((False, True), repeat=len(qst)):
        s = {f for f, o in zip(qst, on, strict=True) if o}
        out[frozenset(s)] = cell_name("question" in s, "source" in s, "typed" in s)
    return out


def factorial_table(analysis: Analysis, factors: Sequence[str], judges: Sequence[str]) -> dict:
    """The 2^k cell table and the exact Shapley value of each factor, per metric."""
    if "instrument" in factors and len(judges) != 2:
        raise InputError("the instrument factor needs exactly two judges (off = first, on = second)",
                         field="--judge")
    arms = factorial_arms(factors)
    rows = []
    values: dict[str, dict[frozenset[str], float]] = {m: {} for m in METRICS}
    for cell in factorial_cells(list(factors)):
        judge = judges[1] if "instrument" in cell else judges[0]
        arm = arms[frozenset(cell - {"instrument"})]
        s = analysis.result["judges"][judge]["arms"][arm]
        row = {"cell": "".join(f[0].upper() + str(int(f in cell)) for f in factors), "judge": judge, "arm": arm,
               **{f: int(f in cell) for f in factors}, "n": s["n"]}
        for m in METRICS:
            v = s.get(m)
            row[m] = v
            values[m][cell] = float("nan") if v is None else float(v)
        rows.append(row)
    sh = {m: shapley(values[m], list(factors)) for m in METRICS}
    return jsonable({"factors": list(factors), "cells": rows, "shapley": sh})


