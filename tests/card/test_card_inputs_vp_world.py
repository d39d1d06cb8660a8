"""A vp run and a world factorial record their data files' hashes in ``result.json``; a card made after a
data file changed says so, and ``card diff`` does not compare that section's quantities."""

from __future__ import annotations

import json
import sys
import types

import numpy as np

from judgeaudit.card.diff import diff_cards
from judgeaudit.commands.card import card
from judgeaudit.runinfo import file_sha256


def _pairs(path, n=60):
    rng = np.random.default_rng(0)
    words = "red green blue stone river cloud light paper".split()
    lines = []
    for i in range(n):
        a, b = (" ".join(rng.choice(words, int(rng.integers(3, 40)))) for _ in range(2))
        lines.append(json.dumps({"q": f"q{i}", "ra": a, "rb": b, "pref": "A" if len(a) > len(b) else "B"}))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_vp_run_records_its_data_file_and_the_card_flags_an_edit(tmp_path):
    from judgeaudit.commands.vp import run_audit

    data = _pairs(tmp_path / "pairs.jsonl")
    spec = f"jsonl:{data}?prompt=q&response_a=ra&response_b=rb&label=pref"
    run_audit([spec], mode="paired", out=tmp_path / "v", permutations=3, n_boot=50, transfer=False)
    res = json.loads((tmp_path / "v" / "result.json").read_text())
    assert res["inputs"]["files"] == {f"set:{spec}": {"path": str(data.resolve()), "sha256": file_sha256(data)}}
    ca = card("reference:length", [tmp_path / "v"], tmp_path / "ca")
    cb = card("reference:random", [tmp_path / "v"], tmp_path / "cb")
    assert ca["sections"]["vp"]["rows"][0]["source"]["inputs_changed"] == []
    before = {c.quantity: c for c in diff_cards(ca, cb)}
    assert before["vp.pairs.paired.a_imp"].ci is not None

    data.write_text(data.read_text().replace('"pref": "A"', '"pref": "B"', 5))   # five labels flipped
    why = f"its set:{spec} input {data.resolve()} changed after the run (SHA-256 differs from the one recorded)"
    again = card("reference:length", [tmp_path / "v"], tmp_path / "ca2")
    # the card names the file relative to its own folder (a card is shared; card.share)
    shared = why.replace(str(data.resolve()), "../pairs.jsonl").replace(str(data), "../pairs.jsonl")
    assert again["sections"]["vp"]["rows"][0]["source"]["inputs_changed"] == [shared]
    assert f"The vp run's input changed after it ran ({shared})" in " ".join(again["verdict"])
    assert "Input changed since the run" in (tmp_path / "ca2" / "card.html").read_text()
    after = {c.quantity: c for c in diff_cards(ca, cb)}
    row = after["vp.pairs.paired.a_imp"]
    # the cards name the set by its spec as they wrote it (relative to their folders), the file checked now by
    # its path on this machine
    w = why.replace(f"set:{spec}", f"set:{spec.replace(str(data), '../pairs.jsonl')}")
    assert row.ci is None and row.how == f"not comparable: A's {w}; B's {w}"
    assert (row.a, row.b) == (before["vp.pairs.paired.a_imp"].a, before["vp.pairs.paired.a_imp"].b)


def test_a_world_factorial_records_its_data_files_and_the_card_flags_an_edit(tmp_path, monkeypatch):
    from world_fixtures import ScriptedJudge, oracle_reply, tiny_items

    from judgeaudit.commands.world import run_factorial_cmd

    data = tmp_path / "world.jsonl"
    data.write_text("".join(json.dumps({"id": it.item_id}) + "\n" for it in tiny_items()))
    mod = types.ModuleType("judgeaudit.datasets.world")
    mod.load_world = lambda spec: types.SimpleNamespace(items=tuple(tiny_items()),
                                                        provenance={"spec": spec, "files": [str(data)],
                                                                    "excluded": {}})
    monkeypatch.setitem(sys.modules, "judgeaudit.datasets.world", mod)
    monkeypatch.setattr("judgeaudit.commands.common.make_judge", lambda spec, **kw: ScriptedJudge(oracle_reply, spec))
    run_factorial_cmd("tiny:x", ["reference:oracle"], "question,source", out=tmp_path / "f", votes=1, n_boot=50,
                      progress=False)
    res = json.loads((tmp_path / "f" / "result.json").read_text())
    assert "factorial" in res
    assert res["inputs"]["files"] == {"data:0": {"path": str(data.resolve()), "sha256": file_sha256(data)}}
    ca = card("reference:oracle", [tmp_path / "f"], tmp_path / "ca")
    assert ca["sections"]["world"]["source"]["inputs_changed"] == []
    # the tiny set has 4 clusters: compared here from 1 shared unit up
    n_world = sum(c.quantity.startswith("world.") and c.ci is not None
                  for c in diff_cards(ca, ca, n_boot=50, min_shared=1))
    assert n_world == 20    # 4 cells × 5 metrics

    data.write_text(data.read_text() + json.dumps({"id": "added"}) + "\n")
    why = f"its data:0 input {data.resolve()} changed after the run (SHA-256 differs from the one recorded)"
    again = card("reference:oracle", [tmp_path / "f"], tmp_path / "ca2")
    shared = why.replace(str(data.resolve()), f"../{data.name}")      # relative to the card's folder
    assert again["sections"]["world"]["source"]["inputs_changed"] == [shared]
    assert f"The world run's input changed after it ran ({shared})" in " ".join(again["verdict"])
    assert "Input changed since the run" in (tmp_path / "ca2" / "card.html").read_text()
    world = [c for c in diff_cards(ca, ca, n_boot=50, min_shared=1) if c.quantity.startswith("world.")]
    assert len(world) == n_world and all(c.ci is None and c.how == f"not comparable: A's {why}; B's {why}"
                                         for c in world)
