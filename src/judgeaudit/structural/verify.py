"""Verifying every certificate in a verdict table: re-ask the named NLI pairs, confirm each pattern."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

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


def _defects(cell: Any) -> list[dict[str, Any]]:
    if cell is None or (isinstance(cell, float) and cell != cell):
        return []
    if isinstance(cell, str):
        cell = json.loads(cell)
    return [d if isinstance(d, dict) else dict(d) for d in list(cell)]


def verify_frame(verdicts: pd.DataFrame, backend_for: Callable[[str], NLIBackend] | None = None,
                 *, atol: float = 1e-6) -> list[CertificateCheck]:
    """One check per defect that carries a certificate (defects without one are not listed).
    ``backend_for(spec)`` builds the verifier's backend (default :func:`make_nli`); one per spec."""
    backend_for = backend_for or make_nli
    built: dict[str, NLIBackend] = {}
    out: list[CertificateCheck] = []
    for row in verdicts.to_dict("records"):
        for j, d in enumerate(_defects(row.get("defects"))):
            cert = d.get("certificate")
            if isinstance(cert, str):
                cert = json.loads(cert)
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
