"""``hf:<path or model name>`` — a Hugging Face causal LM or reward model through transformers.

For users with local weights (and GPUs). Nothing is downloaded unless the hub is reachable and the
name is not a local folder; offline, a missing model is a clear error.

* causal LM (default, ``kind=causal``): graded verdicts read the next-token distribution over
  the score digits after the same plain-text prompt as ``local``; pairwise compares the
  probabilities of ``A`` and ``B`` after ``Verdict:``.
* reward model (``kind=reward``; a sequence-classification head with one output): graded verdict
  ``1 + 8·sigmoid(−reward)`` of (evidence, claim) — a higher reward is a better-licensed claim;
  pairwise prefers the response with the higher reward.

Forward passes are made as reproducible as torch allows: eval mode (no dropout), inference mode, a
fixed intra-op thread count (``threads=N``; default: torch's count when the model is loaded) and
deterministic algorithms (warn-only, so an op without a deterministic kernel still runs). These
torch settings are process-wide, so each pass holds one lock and restores them afterwards.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from judgeaudit.errors import InputError
from judgeaudit.families import resolve, split_spec_family
from judgeaudit.judges import elicit
from judgeaudit.judges.base import Judge, JudgeSpec, register
from judgeaudit.records import JudgeRequest, Verdict


_FORWARD_LOCK = threading.Lock()   # the settings reproducible_forward changes are global to torch


@contextmanager
def reproducible_forward(threads: int) -> Iterator[None]:
    """One forward pass at a time in this process, with ``threads`` intra-op threads, deterministic algorithms
    and no autograd; torch's previous settings are restored afterwards. Every torch model judgeaudit runs (the
    ``hf`` judge, the NLI checker) runs its forward passes inside it, so that a pass never changes another's
    thread count and a model gives the same numbers on every run."""
    import torch

    with _FORWARD_LOCK:
        before = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(),
                  torch.is_deterministic_algorithms_warn_only_enabled())
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(True, warn_only=True)
        try:
            with torch.inference_mode():
                yield
        finally:
            torch.use_deterministic_algorithms(before[1], warn_only=before[2])
            torch.set_num_threads(before[0])


class HFJudge(Judge):
    max_concurrency = 1

    def __init__(self, spec: JudgeSpec):
        super().__init__(spec)
        self.kind = spec.options.get("kind", "causal")
        self.threads: int | None = spec.options.get("threads")
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            try:
                import torch
                from transformers import (AutoModelForCausalLM, AutoModelForSequenceClassification,
                                          AutoTokenizer)
            except ImportError:
                raise InputError("hf judges need torch and transformers (pip install 'judgeaudit[hf]')",
                                 field="judge") from None
            cls = AutoModelForSequenceClassification if self.kind == "reward" else AutoModelForCausalLM
            try:
                tok = AutoTokenizer.from_pretrained(self.spec.model)
                model = cls.from_pretrained(self.spec.model)
            except OSError as e:
                raise InputError(f"cannot load Hugging Face model {self.spec.model!r} ({str(e).splitlines()[0]})",
                                 field="judge") from None
            model.eval()
            if self.threads is None:
                self.threads = torch.get_num_threads()
            self._loaded = (tok, model)
        return self._loaded

    def render(self, request: JudgeRequest) -> str:
        if self.kind == "reward":
            if request.form == "pairwise":
                return f"{request.prompt}\x1f{request.response_a}\x1f{request.response_b}"
            return f"{request.evidence or ''}\x1f{request.text}"
        return elicit.render(request)

    def _token_ids(self, tok: Any, texts: list[str]) -> list[int]:
        ids = []
        for t in texts:
            enc = tok.encode(t, add_special_tokens=False)
            if len(enc) != 1:
                enc = tok.encode(" " + t, add_special_tokens=False)[-1:]
            ids.append(enc[0])
        return ids

    def _next_token_probs(self, prompt: str, candidates: list[str]) -> tuple[list[float], float]:
        import torch

        tok, model = self._load()
        ids = self._token_ids(tok, candidates)
        enc = tok(prompt, return_tensors="pt")
        with reproducible_forward(self.threads):
            logits = model(**enc).logits[0, -1].double()
        p = torch.softmax(logits, dim=-1)[ids]
        mass = float(p.sum())
        return (p / p.sum()).tolist(), mass

    def _reward(self, first: str, second: str) -> float:
        tok, model = self._load()
        enc = tok(first, second, return_tensors="pt", truncation=True)
        with reproducible_forward(self.threads):
            return float(model(**enc).logits[0, 0])

    def judge_sync(self, request: JudgeRequest) -> Verdict:
        with self._lock:
            if self.kind == "reward":
                if request.form == "pairwise":
                    ra = self._reward(request.prompt or "", request.response_a or "")
                    rb = self._reward(request.prompt or "", request.response_b or "")
                    return self.make_verdict(request, choice="A" if ra >= rb else "B", parse_ok=True,
                                         raw=f"reward A={ra:.4f} B={rb:.4f}", provider="transformers")
                if request.form != "graded":
                    raise ValueError(f"reward models give graded or pairwise verdicts, not {request.form}")
                r = self._reward(request.evidence or "", request.text or "")
                return self.make_verdict(request, score=1.0 + 8.0 / (1.0 + math.exp(r)), parse_ok=True,
                                     score_source="distribution", raw=f"reward={r:.4f}", provider="transformers")
            if request.form == "graded":
                dist, mass = self._next_token_probs(self.render(request) + " ", [str(s) for s in elicit.SCALE])
                return self.make_verdict(request, score=elicit.expected_score(dist), score_dist=dist, parse_ok=True,
                                     score_source="distribution", meta={"digit_mass": mass},
                                     provider="transformers")
            if request.form == "pairwise":
                (pa, _pb), mass = self._next_token_probs(self.render(request) + " (omitted)\nVerdict: ", ["A", "B"])
                return self.make_verdict(request, choice="A" if pa >= 0.5 else "B", parse_ok=True,
                                     raw=f"P(A)={pa:.4f}", meta={"choice_mass": mass}, provider="transformers")
            raise ValueError(f"hf judges give graded or pairwise verdicts, not {request.form}")

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        return await asyncio.to_thread(self.judge_sync, request)


@register("hf", "a Hugging Face causal LM or reward model via transformers: hf:<path>[, kind=reward]")
def _make(argument: str, options: dict[str, Any]) -> Judge:
    if not argument:
        raise InputError("hf judge needs a model path or name, e.g. hf:./my-model", field="judge")
    argument, spec_family = split_spec_family(argument)
    opts = dict(options)
    spec_id = opts.pop("id")
    opts.pop("api_base", None)
    kind = opts.pop("kind", "causal")
    if kind not in ("causal", "reward"):
        raise InputError(f"hf kind must be causal or reward, got {kind!r}", field="kind")
    transport: dict[str, Any] = {"kind": kind}
    if "threads" in opts:
        threads = opts.pop("threads")
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise InputError(f"hf threads must be a whole number ≥ 1, got {threads!r}", field="threads")
        transport["threads"] = threads
    family = resolve(argument, opts.pop("family", None) or spec_family, local=True)
    return HFJudge(JudgeSpec(id=spec_id, backend="hf", model=argument, family=family, params=opts,
                             template_version=elicit.TEMPLATE_VERSION, options=transport))
