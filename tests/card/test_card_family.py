"""The card shows the model family its runs recorded (the ``family`` of every verdict the backend
wrote), never a family worked out again from the judge id: a ``family=`` given beside the spec (an
experiment file's ``{"spec": …, "family": …}``), a Python judge's ``?family=``, a replay file's
column and a reference instrument are each recorded by the backend and absent from the id."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from validityshape import judge_block, validity_result

from judgeaudit.card.build import build_card
from judgeaudit.card.render import card_html
from judgeaudit.card.sources import collect
from judgeaudit.judges.base import make_judge


def _replay_file(tmp: Path) -> str:
    f = tmp / "replayed.jsonl"
    f.write_text(json.dumps({"request_id": "b0", "score": 3, "model": "acme-7b", "family": "mistral"}) + "\n")
    return f"replay:{f}"


SPECS = [
    ("api:openai/gpt-4o-mini", {"family": "google"}),           # an experiment file's family beside the spec
    ("api:openai/gpt-4o-mini?family=google", {}),
    ("api:anthropic/claude-3-5-haiku-latest", {}),
    ("python:pyjudge_callables:grade?family=meta", {}),
    ("reference:length", {}),
    ("hf:google/gemma-2-9b-it", {}),
    ("api:openai/my-finetune", {"family": "openai"}),
    ("REPLAY", {}),
]


def _run(folder: Path, judge_id: str, family: str | None, n: int = 69) -> None:
    folder.mkdir(parents=True)
    block = judge_block(0.97, [0.93, 0.99], 0.5, [0.4, 0.6], n_construct=35, n_control=25)
    (folder / "result.json").write_text(json.dumps({**validity_result({judge_id: block}, n_base=5), "run_id": "r1",
                                                    "created_at": "2026-09-02T00:00:00+00:00"}))
    pd.DataFrame({"judge_id": [judge_id] * n, "request_id": [f"q{i}" for i in range(n)], "score": 3.0,
                  "family": [family] * n}).to_parquet(folder / "verdicts.parquet")


@pytest.mark.parametrize(("spec", "opts"), SPECS, ids=[s for s, _ in SPECS])
def test_the_card_shows_the_family_the_run_recorded(tmp_path, spec, opts):
    spec = _replay_file(tmp_path) if spec == "REPLAY" else spec
    judge = make_judge(spec, **opts)
    recorded = judge.spec.family                       # what every verdict of the run carries
    _run(tmp_path / "v", judge.spec.id, recorded)
    card = build_card(judge.spec.id, collect([tmp_path / "v"])).to_json()
    src = card["sections"]["validity"]["source"]
    assert src["family"] == recorded and src["family_from"] == "verdicts.parquet"
    html = card_html(card)
    assert f"family {recorded}" in html


def test_a_run_that_records_no_family_is_shown_as_such(tmp_path):
    _run(tmp_path / "v", "api:openai/gpt-4o-mini", None)
    card = build_card("api:openai/gpt-4o-mini", collect([tmp_path / "v"])).to_json()
    assert card["sections"]["validity"]["source"]["family"] is None     # not re-derived from the id
    assert "family not recorded by its runs" in card_html(card)


def test_runs_that_recorded_two_families_show_both(tmp_path):
    _run(tmp_path / "v", "api:x/y", "google")
    df = pd.read_parquet(tmp_path / "v" / "verdicts.parquet")
    df.loc[:3, "family"] = "openai"
    df.to_parquet(tmp_path / "v" / "verdicts.parquet")
    assert build_card("api:x/y", collect([tmp_path / "v"])).to_json()["sections"]["validity"]["source"]["family"] == \
        "google, openai"
