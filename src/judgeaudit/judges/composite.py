"""Remedy instruments built from other judges: ``vote:K:<spec>`` and ``ensemble:<spec>,<spec>,…``.

Both are judges like any other, so the prediction that such remedies raise S without moving R
(construct-validity.txt Remark 2) can be read off the same table.

* ``vote:K:<spec>`` — K samples of one judge (epochs 0..K−1, sampled at temperature 1 unless the
  inner spec sets one), graded verdict = mean grade; pairwise = majority choice.
* ``ensemble:a,b,…`` — one call to each judge, graded verdict = mean grade; pairwise = majority.
A sample that fails or does not parse is left out of the mean and counted in ``meta``.

A template goes to the inner judges: ``vote:3:api:m?template=T`` (the inner spec's own option),
``ensemble:api:a?template=T,api:b`` (the first member's), and a ``template`` option (``--template``, a
YAML entry's ``template:``) to every inner judge that renders prompts and names none of its own. The
inner judges' fingerprints, hence the composite's, carry it; the composite reports the template its
inner judges share (and its scale), None when they share none.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import numpy as np

from judgeaudit.errors import InputError
from judgeaudit.families import combine
from judgeaudit.judges.base import Judge, JudgeSpec, make_judge, register, with_template
from judgeaudit.records import JudgeRequest, Verdict


class _Composite(Judge):
    """A judge made of inner judges: a template is theirs (``use_template`` passes it on)."""

    def inner_judges(self) -> list[Judge]:
        raise NotImplementedError

    @property
    def takes_template(self) -> bool:  # type: ignore[override]
        return any(j.takes_template for j in self.inner_judges())

    def use_template(self, template: Any) -> None:
        if not self.takes_template:
            raise InputError(f"judge {self.spec.id}: none of its inner judges renders prompts, so it takes no "
                             "template (the api and local backends do)", field="template")
        for j in self.inner_judges():
            if j.takes_template and j.template is None:
                j.use_template(template)
        self.refresh()

    def refresh(self) -> None:
        """The spec and template after the inner judges changed (their fingerprints enter the spec)."""
        raise NotImplementedError

    @property
    def scale(self) -> Any:
        """The scale the inner judges share (their mean grade is on it); None when they share none."""
        scales = {json.dumps(j.scale.model_dump()) if j.scale is not None else None for j in self.inner_judges()}
        return self.inner_judges()[0].scale if len(scales) == 1 else None

    def _shared_template(self) -> Any:
        refs = {json.dumps(j.template.ref()) if j.template is not None else None for j in self.inner_judges()}
        return self.inner_judges()[0].template if len(refs) == 1 else None


def _combine(judge: Judge, request: JudgeRequest, parts: list[Verdict]) -> Verdict:
    usable = [v for v in parts if v.error is None and v.parse_ok]
    meta = {"n_samples": len(parts), "n_usable": len(usable),
            **({"regrade": True} if request.meta.get("regrade") else {})}   # its kind (runtime.estimate)
    errors = [v.error for v in parts if v.error]
    if not usable:
        return judge.make_verdict(request, parse_ok=False, meta=meta,
                              error=("; ".join(errors) if len(errors) == len(parts) else None))
    fields: dict[str, Any] = dict(parse_ok=True, meta=meta,
                                  cost_usd=sum(v.cost_usd or 0.0 for v in parts),
                                  input_tokens=sum(v.input_tokens or 0 for v in parts),
                                  output_tokens=sum(v.output_tokens or 0 for v in parts),
                                  raw=json.dumps([v.score if v.score is not None else v.choice for v in parts]))
    if request.form == "graded":
        scores = [v.score for v in usable if v.score is not None]
        fields.update(score=float(np.mean(scores)), score_source=usable[0].score_source)
        dists = [v.score_dist for v in usable if v.score_dist]
        if len(dists) == len(usable):
            fields["score_dist"] = np.mean(np.asarray(dists), axis=0).tolist()
    elif request.form == "pairwise":
        counts = Counter(v.choice for v in usable)
        top = counts.most_common()
        fields["choice"] = "tie" if len(top) > 1 and top[0][1] == top[1][1] else top[0][0]
    else:
        raise ValueError(f"{judge.spec.backend} judges combine graded or pairwise verdicts, not {request.form}")
    return judge.make_verdict(request, **fields)


class VoteJudge(_Composite):
    def __init__(self, spec: JudgeSpec, inner: Judge, k: int):
        super().__init__(spec)
        self.inner, self.k = inner, k
        self.max_concurrency = inner.max_concurrency
        self.cacheable = inner.cacheable
        self.refresh()

    def inner_judges(self) -> list[Judge]:
        return [self.inner]

    def refresh(self) -> None:
        self.template = self.inner.template
        self.spec = self.spec.model_copy(update={
            "params": {**self.spec.params, "inner": self.inner.spec.fingerprint()},
            "template": self.template.ref() if self.template is not None else None})

    @property
    def provider(self) -> str:
        return self.inner.provider

    def render(self, request: JudgeRequest) -> str:
        return self.inner.render(request)

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        base = request.epoch * self.k
        subs = [request.model_copy(update={"epoch": base + i}) for i in range(self.k)]
        if self.inner.max_concurrency == 1:
            parts = [await self.inner.judge_one(r) for r in subs]
        else:
            parts = list(await asyncio.gather(*(self.inner.judge_one(r) for r in subs)))
        return _combine(self, request, parts)


class EnsembleJudge(_Composite):
    def __init__(self, spec: JudgeSpec, members: list[Judge]):
        super().__init__(spec)
        self.members = members
        self.max_concurrency = min(m.max_concurrency for m in members)
        self.cacheable = all(m.cacheable for m in members)
        self.refresh()

    def inner_judges(self) -> list[Judge]:
        return self.members

    def refresh(self) -> None:
        self.template = self._shared_template()
        self.spec = self.spec.model_copy(update={
            "params": {**self.spec.params, "members": [m.spec.fingerprint() for m in self.members]},
            "template": self.template.ref() if self.template is not None else None})

    def render(self, request: JudgeRequest) -> str:
        return "\x1e".join(m.render(request) for m in self.members)

    async def judge_one(self, request: JudgeRequest) -> Verdict:
        parts = [await m.judge_one(request) for m in self.members]
        return _combine(self, request, parts)


@register("vote", "K samples of one judge, mean grade: vote:K:<spec> (e.g. vote:3:local)", composite=True)
def _make_vote(argument: str, options: dict[str, Any]) -> Judge:
    k_text, _, inner_spec = argument.partition(":")
    if not k_text.isdigit() or int(k_text) < 1 or not inner_spec:
        raise InputError(f"vote spec must be vote:K:<spec> with K ≥ 1, got vote:{argument}", field="judge")
    opts = {k: v for k, v in options.items() if k not in ("id", "template")}
    opts.setdefault("temperature", 1.0)
    inner = make_judge(inner_spec, **opts)
    spec = JudgeSpec(id=options["id"], backend="vote", model=inner.spec.id, family=inner.spec.family,
                     params={"k": int(k_text), "inner": inner.spec.fingerprint()},
                     template_version=inner.spec.template_version)
    return _templated(VoteJudge(spec, inner, int(k_text)), options.get("template"))


@register("ensemble", "mean grade of several judges: ensemble:<spec>,<spec>,…", composite=True)
def _make_ensemble(argument: str, options: dict[str, Any]) -> Judge:
    specs = [s for s in argument.split(",") if s]
    if len(specs) < 2:
        raise InputError("ensemble needs at least two judge specs separated by commas", field="judge")
    opts = {k: v for k, v in options.items() if k not in ("id", "template")}
    members = [make_judge(s, **opts) for s in specs]
    spec = JudgeSpec(id=options["id"], backend="ensemble", model=",".join(m.spec.id for m in members),
                     family=combine(m.spec.family for m in members),
                     params={"members": [m.spec.fingerprint() for m in members]})
    return _templated(EnsembleJudge(spec, members), options.get("template"))



def _templated(judge: _Composite, name: str | None) -> Judge:
    """``judge`` with the ``template`` option given to its inner judges."""
    return judge if name is None else with_template(judge, name)
