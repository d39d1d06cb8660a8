"""``structural:<nli-spec>[?top_k=5&tau_s=0.95&tau_c=0.8&specificity=1&batch_size=16&cache=PATH]`` — the
structural judge: the entailment graph over output and world, read as defects with certificates.

The request's ``text`` is the output, ``evidence`` the world. Forms:

* ``label``: ``Verdict.label`` — True (defective) when the graph has any defect;
* ``sentences``: ``Verdict.unit_labels`` — one label per unit: the request's ``units`` are the
  claims when given (their order is kept), else the output's sentences; a unit is defective when it
  is contradicted or unsupported;
* ``defects``: ``Verdict.defects`` — one :class:`~judgeaudit.records.Defect` per defect, each with
  its certificate (same schema as LLM defect reports: ``span`` is the claim, ``reason`` why).

A pair the NLI backend gives no probability for (an unreadable ``api:`` reply is a row of NaN) makes
the verdict a failed call (``error`` set, no label or defects), never an unsupported claim.

For ``label`` and ``defects`` the request's ``units`` are requirements (IFEval constraint texts):
each becomes a requirement node, and an uncovered one is a defect. All forms carry the defects
(with certificates) so every verdict can be verified; ``meta`` names the NLI backend and whether it
is weak.

Storage: the verdict is one call in the call store like any judge's (its key hashes the NLI spec,
the thresholds, top_k and the rendered request). ``cache=PATH`` also keeps each NLI pair in the
``nli_pairs`` table of that SQLite file (:class:`~judgeaudit.structural.nli.NLIPairCache`), so pairs
shared across requests and runs are computed once.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import numpy as np

from judgeaudit.errors import InputError
from judgeaudit.judges.base import Judge, JudgeSpec, register
from judgeaudit.records import JudgeRequest, Verdict
from judgeaudit.specs import split
from judgeaudit.structural.certificates import claim_status, defects
from judgeaudit.structural.graph import Encoder, GraphParams, build_graph
from judgeaudit.structural.nli import CachedNLI, NLIBackend, NLIPairCache, make_nli

TEMPLATE_VERSION = "structural-v1"
FORMS = ("label", "sentences", "defects")


class StructuralJudge(Judge):
    max_concurrency = 1

    def __init__(self, spec: JudgeSpec, backend: NLIBackend, params: GraphParams, encoder: Encoder | None = None):
        super().__init__(spec)
        self.backend = backend
        self.params = params
        self.encoder = encoder
        self._lock = threading.Lock()

    @property
    def provider(self) -> str:
        return f"structural:{self.backend.spec}"

    def calibration(self) -> dict[str, Any]:
        """The thresholds used, the defaults, the development split and the sensitivity there."""
        from judgeaudit.structural.calibrate import calibration_record

        return calibration_record(self.params, self.backend.weak)

    def render(self, request: JudgeRequest) -> str:
        return json.dumps({"form": request.form, "output": request.text, "world": request.evidence,
                           "units": request.units}, sort_keys=True)

    def judge_sync(self, request: JudgeRequest) -> Verdict:
        if request.form not in FORMS:
            raise ValueError(f"the structural judge gives {', '.join(FORMS)} verdicts, not {request.form}")
        units = [u for u in (request.units or []) if u and u.strip()]
        if request.form == "sentences" and request.units:
            claims: Any = units
            requirements: list[str] = []
        else:
            claims, requirements = request.text or "", units
        with self._lock:
            g = build_graph(request.evidence, claims, self.backend, self.params, requirements, self.encoder)
        missing = [pair for pair, probs in g.probs.items() if not np.isfinite(probs).all()]
        if missing:   # an NLI reply that gave no probability: the verdict is a failed call, never "unsupported"
            (pk, pi), (hk, hi) = missing[0]
            return self.make_verdict(request, parse_ok=False, provider=self.provider,
                                 error=f"NLI backend {self.backend.spec} gave no probability for {len(missing)} of "
                                       f"{len(g.probs)} pairs (first: {pk} {pi} → {hk} {hi})",
                                 meta={"nli_backend": self.backend.spec, "weak_backend": self.backend.weak})
        found = defects(g)
        fields: dict[str, Any] = {"defects": found, "parse_ok": True, "provider": self.provider, "cost_usd": 0.0,
                                  "raw": f"{len(g.claims)} claims, {len(g.evidence)} evidence sentences, "
                                         f"{len(g.requirements)} requirements, {len(found)} defects",
                                  "meta": {"nli_backend": self.backend.spec, "weak_backend": self.backend.weak,
                                           "n_pairs": len(g.probs), "claims": list(g.claims)}}
        if request.form == "label":
            fields["label"] = bool(found)
        elif request.form == "sentences":
            fields["unit_labels"] = [s != "supported" for s in claim_status(g)]
        return self.make_verdict(request, **fields)

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        return await asyncio.to_thread(self.judge_sync, request)

    def close(self) -> None:
        if isinstance(self.backend, CachedNLI):
            self.backend.cache.close()


def _number(name: str, v: Any, cast: type) -> Any:
    try:
        return cast(v)
    except (TypeError, ValueError):
        raise InputError(f"structural option {name} must be a {'whole ' if cast is int else ''}number, got {v!r}",
                         field=name) from None


def parse_structural(argument: str, options: dict[str, Any]) -> tuple[str, GraphParams, dict[str, Any]]:
    """``(nli spec, graph params, backend options)`` from ``<nli-spec>?k=v&...`` and keyword options
    (keywords win)."""
    nli_spec, in_spec = split(argument)
    opts: dict[str, Any] = {**in_spec, **options}
    known = {"tau_s", "tau_c", "top_k", "specificity", "batch_size", "cache", "api_base", "threads"}
    unknown = sorted(set(opts) - known - {"id", "family", "encoder"})
    if unknown:
        raise InputError(f"unknown structural option {unknown[0]!r}; options: {', '.join(sorted(known))}",
                         field=unknown[0])
    spec_raw = opts.get("specificity", True)
    params = GraphParams(
        tau_s=_number("tau_s", opts.get("tau_s", GraphParams.tau_s), float),
        tau_c=_number("tau_c", opts.get("tau_c", GraphParams.tau_c), float),
        top_k=None if opts.get("top_k") in (None, "", "all") else _number("top_k", opts["top_k"], int),
        specificity=spec_raw if isinstance(spec_raw, bool) else str(spec_raw).lower() not in ("0", "false", "no"))
    backend_opts = {k: opts[k] for k in ("batch_size", "threads") if k in opts}
    backend_opts = {k: _number(k, v, int) for k, v in backend_opts.items()}
    if "api_base" in opts:
        backend_opts["api_base"] = opts["api_base"]
    return nli_spec, params, {**backend_opts, "cache": opts.get("cache")}


@register("structural", "the entailment-graph judge: structural:<lexical|hf:PATH|api:MODEL|local>"
                        "[?top_k=5&tau_s=0.95&tau_c=0.8&cache=calls.sqlite]")
def _make(argument: str, options: dict[str, Any]) -> Judge:
    if not argument:
        raise InputError("structural judge needs an NLI spec, e.g. structural:lexical", field="judge")
    opts = dict(options)
    spec_id = opts.pop("id")
    family = opts.pop("family", None)
    encoder = opts.pop("encoder", None)
    nli_spec, params, bopts = parse_structural(argument, opts)
    cache = bopts.pop("cache")
    backend = make_nli(nli_spec, **bopts)
    backend.load()   # a model that cannot load fails here, before any request (a blind arm asks no pair)
    if cache:
        backend = CachedNLI(backend, NLIPairCache(cache))
    spec = JudgeSpec(id=spec_id, backend="structural", model=backend.spec, family=family,
                     params={"tau_s": params.tau_s, "tau_c": params.tau_c, "top_k": params.top_k,
                             "specificity": params.specificity},
                     template_version=TEMPLATE_VERSION,
                     options={k: v for k, v in {**bopts, "cache": cache}.items() if v is not None})
    return StructuralJudge(spec, backend, params, encoder)


def structural_judge(backend: NLIBackend, *, id: str | None = None, encoder: Encoder | None = None,
                     **params: Any) -> StructuralJudge:
    """A structural judge over an NLI backend object (e.g. a scripted one in tests)."""
    p = GraphParams(**params)
    backend.load()
    spec = JudgeSpec(id=id or f"structural:{backend.spec}", backend="structural", model=backend.spec,
                     params={"tau_s": p.tau_s, "tau_c": p.tau_c, "top_k": p.top_k, "specificity": p.specificity},
                     template_version=TEMPLATE_VERSION)
    return StructuralJudge(spec, backend, p, encoder)
