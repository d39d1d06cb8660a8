"""Verifying every certificate in a verdict table: re-ask the named NLI pairs, confirm each pattern."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.errors import InputError
from judgeaudit.structural.certificates import verify_certificate
from judgeaudit.structural.nli import NLIBackend, make_nli


@dataclass(frozen=True)
class CertificateCheck:
    request_id: str
    judge_id: str
    defect: int          # position in the verdict's defect list
    unit_id: str | None
    type: str | None
    backend: str | None
    ok: bool
    problem: str | None


class _Malformed(ValueError):
    """What is wrong with one verdict's defects cell (``verify_frame`` names the file, row and field)."""


def _json(value: Any, kind: type, what: str) -> Any:
    """``value``, decoded when it is JSON text; ``_Malformed`` unless it is a ``kind``."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise _Malformed(f"{what} is not a JSON {kind.__name__.replace('dict', 'object')}") from None
    if hasattr(value, "tolist") and not isinstance(value, dict):   # a Parquet list column is an array
        value = value.tolist()
    if not isinstance(value, kind):
        raise _Malformed(f"{what} is not a JSON {kind.__name__.replace('dict', 'object')}")
    return value


def _defects(cell: Any) -> list[dict[str, Any]]:
    """The defects of one verdict, each with its certificate decoded (``_Malformed`` when not
    a list of objects, or when a certificate is not an object)."""
    if cell is None or (isinstance(cell, float) and cell != cell):
        return []
    out = []
    for j, d in enumerate(_json(cell, list, "defects")):
        d = dict(_json(d, dict, f"defect {j}"))
        if d.get("certificate") is not None:
            d["certificate"] = _json(d["certificate"], dict, f"defect {j}'s certificate")
        out.append(d)
    return out


def verify_frame(verdicts: pd.DataFrame, backend_for: Callable[[str], NLIBackend] | None = None,
                 *, atol: float = 1e-6, path: str | Path | None = None) -> list[CertificateCheck]:
    """One check per defect that carries a certificate (defects without one are not listed).
    ``backend_for(spec)`` builds the verifier's backend (default :func:`make_nli`); one per spec.
    A defects cell that is not a list of objects (or a certificate that is not an object) is an
    ``InputError`` naming ``path``, the row's line (``verdicts.attrs["lines"]``) and the field."""
    backend_for = backend_for or make_nli
    built: dict[str, NLIBackend] = {}
    out: list[CertificateCheck] = []
    lines = verdicts.attrs.get("lines") or [None] * len(verdicts)
    for line, row in zip(lines, verdicts.to_dict("records"), strict=True):
        try:
            found = _defects(row.get("defects"))
        except _Malformed as e:
            raise InputError(f"request {row.get('request_id')!r}: {e}", path=path, line=line,
                             field="defects") from None
        for j, d in enumerate(found):
            cert = d.get("certificate")
            if not cert:
                continue
            spec = cert.get("backend")
            try:
                if spec not in built:
                    built[spec] = backend_for(spec)
                problem = verify_certificate(cert, built[spec], atol=atol)
            except Exception as e:  # noqa: BLE001 - an unverifiable certificate is a rejected one
                problem = f"cannot verify: {type(e).__name__}: {e}"
            out.append(CertificateCheck(str(row.get("request_id")), str(row.get("judge_id")), j, d.get("unit_id"),
                                        cert.get("type"), spec, problem is None, problem))
    return out
