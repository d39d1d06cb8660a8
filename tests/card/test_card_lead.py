"""The card as a judge author shares it: its lead is the judge's own findings (validity, CAP, world, loop),
the label sets it is validated against in a block of their own; the checklist items short; and no
absolute path of the machine that built it in card.md, card.html or card.json."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

from test_card import J, _all_present, _vp, _write
from typer.testing import CliRunner

import judgeaudit
from judgeaudit.card.defaults import DATA
from judgeaudit.cli import app
from judgeaudit.runinfo import file_sha256

ABSOLUTE = re.compile(r"(?<![\w.~-])/(?:tmp|work|home|root|usr|var|opt|mnt|srv|private|Users)/")
"""A path from the root of this machine's file system (a relative path never starts with '/')."""


def _build(tmp_path: Path, root: Path, *extra: str) -> tuple[dict, str, str, Path]:
    out = tmp_path / "card"
    res = CliRunner().invoke(app, ["card", "--judge", J, "--from", str(root), "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    return (json.loads((out / "card.json").read_text()), (out / "card.html").read_text(),
            (out / "card.md").read_text(), out)


def _section(html: str, cls: str) -> str:
    m = re.search(rf"<section class=\"{cls}\"[^>]*>(.*?)</section>", html, re.S)
    assert m, f"no <section class={cls}>"
    return unescape(re.sub(r"<[^>]+>", " ", m.group(1)))


def test_the_lead_is_the_judges_findings_and_the_label_sets_are_a_block_of_their_own(tmp_path):
    root = _all_present(tmp_path / "runs")
    card, html, md, _ = _build(tmp_path, root, "--ledger", str(root / "ledger.yaml"))
    lead = card["lead"]
    assert [k for k, _ in lead["judge"]] == ["validity", "cap", "world", "loop"]
    judge = dict(lead["judge"])
    assert judge["validity"][0].startswith(f"At matched invariance (S = 0.930 [0.900, 0.960] ≥ 0.9), {J} moves")
    assert judge["cap"] == ["On judgebench its CAP profile is weakest on C2 (0.35 [0.25, 0.45], n = 50; below C1 "
                            "with intervals; direct-coverage cells compared)."]
    assert len(judge["loop"]) == 2 and all(x.startswith("In the loop, arm") for x in judge["loop"])
    # a world run with no paired arm difference: said so, with the arms' own numbers in the section below
    assert judge["world"] == ["In the world run no paired arm difference was recorded (no sentence on a "
                              "direction); each arm's rate and interval are in its section below."]
    assert [s for s in lead["label_sets"]] == [x for x in card["verdict"] if "prefs" in x]
    assert lead["label_sets"][0].startswith("Length alone reproduces part of its validation set prefs")
    # the verdict list: the judge's findings first, then the label sets, then the card's status
    flat = [x for _, xs in lead["judge"] for x in xs]
    assert card["verdict"] == flat + lead["label_sets"] + lead["status"]
    assert lead["status"] == ["§6.1 checklist: 6 of 6 items met."]
    # the page: the judge's findings first, without a word on the label sets; then the label sets' block
    assert re.search(r"<main>\s*<header>.*?</header>\s*<section class=\"verdict\"", html, re.S)
    first, sets = _section(html, "verdict"), _section(html, "labelsets")
    assert "prefs" not in first and "At matched invariance" in first and "weakest on C2" in first
    assert "Length alone reproduces part of its validation set prefs" in sets
    assert html.index('class="verdict"') < html.index('class="labelsets"') < html.index('id="validity"')
    # card.md: the same order
    assert md.index("At matched invariance") < md.index("weakest on C2") < md.index("The label sets") \
        < md.index("Length alone reproduces") < md.index("**§6.1 checklist**")


def test_a_card_with_no_judge_finding_says_so_first(tmp_path):
    _write(tmp_path / "runs" / "vp", _vp())
    card, html, md, _ = _build(tmp_path, tmp_path / "runs")
    assert card["lead"]["judge"] == [[k, ["Not measured."]] for k in ("validity", "cap", "world", "loop")]
    first = _section(html, "verdict")
    assert "prefs" not in first and "Not measured." in first


def _many_sets(n: int) -> dict:
    one = _vp()["sets"]["prefs"]
    bare = json.loads(json.dumps(one))
    bare["item"].update(a_hum=None, a_hum_ci=None, vp=None, resolvable=None)
    bare["item"]["members"].pop("provenance_recoverable")
    sets = {f"slice-{k:02d} (a long label-set name)": (one if k % 2 else bare) for k in range(n)}
    return {"config": {}, "transfer": [], "sets": sets}


def test_checklist_items_are_short_on_the_card_and_whole_in_checklist_md(tmp_path):
    root = _all_present(tmp_path / "runs")
    _write(root / "vp", _many_sets(8))
    card, html, md, out = _build(tmp_path, root)
    items = card["sections"]["checklist"]["items"]
    assert all(len(i["short"]) <= 90 for i in items), [i["short"] for i in items]
    assert items[2]["short"] == "no human ceiling for 4 of 8 label-set rows"
    assert items[5]["short"] == "no generative-condition field in 4 of 8 label sets"
    assert items[1]["short"] == "a_imp for all 8 label-set rows"
    rows = re.findall(r"<section class=\"card\" id=\"checklist\">(.*?)</section>", html, re.S)[0]
    cells = [unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", rows, re.S)]
    assert cells and max(map(len, cells)) <= 90
    lines = [x for x in md.splitlines() if re.match(r"- [✓✗] \d\.", x)]
    assert len(lines) == 6 and max(map(len, lines)) <= 120
    full = (out / "checklist.md").read_text()
    assert all(f"slice-{k:02d}" in full for k in range(8))     # the whole evidence stays in checklist.md


def test_a_shared_card_holds_no_absolute_path_of_the_machine(tmp_path):
    root = _all_present(tmp_path / "runs")
    # the validity run read a probe file (recorded with its absolute path and hash) that changed since
    probes = tmp_path / "data" / "probes.jsonl"
    probes.parent.mkdir()
    probes.write_text("{}\n")
    res = json.loads((root / "validity" / "result.json").read_text())
    res["inputs"] = {"judgeaudit": judgeaudit.__version__, "template_version": "1",
                     "files": {"probes": {"path": str(probes.resolve()), "sha256": file_sha256(probes)},
                               "set": {"path": str(DATA / "halueval"), "sha256": {"a.json": "0" * 64}}}}
    (root / "validity" / "result.json").write_text(json.dumps(res))
    probes.write_text("{}\n{}\n")
    # a label set named by its spec (the bundled data's path in it); CAP not run (its hint names bundled data)
    vp = _vp()
    vp["sets"] = {f"halueval:{DATA / 'halueval'}?part=qa": vp["sets"]["prefs"]}
    _write(root / "vp", vp)
    (root / "cap" / "result.json").unlink()
    card, html, md, out = _build(tmp_path, root)
    assert any("changed after" in x for x in card["verdict"])          # the changed input is still said
    assert "cap" in card["verdict"][-1]
    machine = {str(tmp_path), str(tmp_path.resolve()), str(DATA), str(Path(judgeaudit.__file__).parent),
               str(Path.cwd()), str(Path.home())}
    for name in ("card.md", "card.html", "card.json"):
        text = (out / name).read_text()
        for p in machine:
            assert p not in text and p not in unescape(text), (name, p)
        assert not ABSOLUTE.search(unescape(text)), (name, ABSOLUTE.search(unescape(text)).group(0))
    # the paths are relative to the card (or name judgeaudit's bundled data), and still lead to the runs
    src = card["sections"]["validity"]["source"]
    assert src["path"] == "../runs/validity/result.json" and (out / src["path"]).is_file()
    assert src["inputs"]["files"]["probes"]["path"] == "../data/probes.jsonl"
    assert src["inputs"]["files"]["set"]["path"] == "DATA/halueval"
    assert "judgeaudit cap run --set 'judgebench:DATA/judgebench_fixture?name=judgebench_fixture' --set 'llmbar:DATA/llmbar'" in \
        card["sections"]["cap"]["not_measured"]
    assert "DATA: the data folder installed with judgeaudit" in card["sections"]["cap"]["not_measured"]
    assert card["from"] == ["../runs"]


def test_card_diff_reads_the_runs_of_cards_with_relative_paths_from_anywhere(tmp_path, monkeypatch):
    from judgeaudit.commands.card import _read_card

    root = _all_present(tmp_path / "runs")
    _, _, _, out = _build(tmp_path, root)
    monkeypatch.chdir(tmp_path / "runs")
    card = _read_card(Path("../card"))
    assert Path(card.sections.validity.source.path) == (root / "validity" / "result.json").resolve()
    res = CliRunner().invoke(app, ["card", "diff", "../card", str(out / "card.json")])
    assert res.exit_code == 0, res.output
    assert "| validity.R | 0.310 | 0.310 | +0.000 |" in res.output
