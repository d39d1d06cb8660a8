"""The run reports in headless Chromium (Debian's ``chromium`` driven by Playwright) at desktop and phone
widths: world run, world factorial, CAP (a radar, and bars below three axes), validation power, validity
and loop pages, each built from a small scripted, replayed or reference-judge run in this module.

What a reader sees is checked, not the HTML text: the world pages open with the key finding (the paired
gain with its interval and test) and the factorial's Shapley chart comes before its tables; no table cell
reads ``None``/``nan`` (an undefined value is "—" with a footnote saying why); the validation-power legend
does not cover the x-axis labels; a CAP profile with fewer than three axes is drawn as bars; a table wider
than the page scrolls inside its container (the page is never wider than the screen); and a page is
megabytes with plotly.js inline, kilobytes with ``--plotly cdn``. Screenshots are left in the module's
folder (``<page>-desktop.png``, ``<page>-phone.png``). The pages are shown by ``chromium.FilePages``: offline, in
one renderer, plotly.js read from one file instead of inline (compiled once, not once per page); the test of
the inline page opens it as written.

Needs ``apt-get install -y chromium`` and ``pip install playwright==1.65.2``; without them these tests
fail with a clear message when ``CI=true`` and skip otherwise."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from chromium import require_browser
from typer.testing import CliRunner

from judgeaudit.cli import app

pytestmark = pytest.mark.browser

TESTS = Path(__file__).parents[1]
WIDTHS = {"desktop": 1280, "phone": 390}


def _cli(*args) -> None:
    res = CliRunner().invoke(app, [str(a) for a in args])
    assert res.exit_code == 0, res.output


# ---- the runs -------------------------------------------------------------------------------------------------

def _noisy_world_reply(request) -> str:
    """A judge that finds most defects when it is shown the world and few when blind (seeded by the
    request), so every rate has a real interval."""
    from world_fixtures import oracle_reply

    g, shown = request.meta["gold"], request.meta["world_shown"]
    u = int(hashlib.sha256(request.request_id.encode()).hexdigest(), 16) % 100 / 100
    if request.form != "label":
        return oracle_reply(request)
    say = bool(g["defective"]) if u < (0.85 if shown else 0.45) else not g["defective"]
    return json.dumps({"defective": say})


def _world(root: Path) -> dict[str, Path]:
    from world_fixtures import ScriptedJudge, tiny_items

    from judgeaudit.commands.world import run_factorial_cmd, run_world_cmd, write_report

    items = tiny_items() * 3
    items = [it.model_copy(update={"item_id": f"{it.item_id}-{k}"}) for k, it in
             ((i // len(tiny_items()), it) for i, it in enumerate(items))]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("judgeaudit.commands.common.make_judge", lambda spec, **kw: ScriptedJudge(_noisy_world_reply, spec))
        run = run_world_cmd("tiny:x", ["scripted:a", "scripted:b"], ["blind", "informed", "placebo"],
                            out=root / "world", votes=1, n_boot=50, items=items, progress=False, permutations=19)
        write_report(run, root / "world")
        fac = run_factorial_cmd("tiny:x", ["scripted:a"], "question,source", out=root / "factorial",
                                votes=1, n_boot=50, items=items, progress=False)
        write_report(fac, root / "factorial")
    return {"world": root / "world" / "report.html", "factorial": root / "factorial" / "report.html"}


def _vp(root: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    sets = []
    for name in ("a_rather_long_label_set_name", "another_label_set", "third_set"):
        p = root / f"{name}.jsonl"
        rows = [{"q": f"q{i}", "ra": "w " * int(rng.integers(3, 30)), "rb": "w " * int(rng.integers(3, 30)),
                 "pref": "AB"[int(rng.integers(0, 2))]} for i in range(40)]
        p.write_text("".join(json.dumps(r) + "\n" for r in rows))
        sets += ["--set", f"jsonl:{p}?prompt=q&response_a=ra&response_b=rb&label=pref"]
    args = ["vp", "audit", *sets, "--permutations", "20", "--no-transfer", "--mode", "paired", "--jobs", "1"]
    _cli(*args, "--out", root / "vp")
    _cli("--plotly", "cdn", *args, "--out", root / "vp-cdn")
    return {"vp": root / "vp" / "report.html", "vp-cdn": root / "vp-cdn" / "report.html"}


def _cap(root: Path) -> dict[str, Path]:
    import judgeaudit
    from judgeaudit.analyses.cap import cap_profile
    from judgeaudit.commands.cap import write_outputs
    from judgeaudit.datasets._common import UNAVAILABLE, CoverageCell

    data = Path(judgeaudit.__file__).parent / "data" / "judgebench_fixture"
    _cli("cap", "run", "--set", f"judgebench:{data}", "--published", "--bootstrap", "20", "--out", root / "cap")
    # a set with two measurable conditions: its profile is two bars, not a radar collapsed to a line
    cov = {c: UNAVAILABLE for c in ("C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8")}
    cov |= {"C1": CoverageCell("direct", "first half; PA", ("s1",)), "C7": CoverageCell("direct", "A/B and B/A; BC")}
    n = 40
    pairs = pd.DataFrame({"pair_id": [f"p{i}" for i in range(n)], "prompt": "q", "response_a": "a",
                          "response_b": "b", "label": ["A", "B"] * (n // 2), "group": None, "source_set": "two",
                          "subset": ["s1", "s2"] * (n // 2), "condition_a": None, "condition_b": None,
                          "meta": [{}] * n})
    rng = np.random.default_rng(1)
    tables = {j: pd.DataFrame({"pair_id": pairs["pair_id"], "judge_id": j, "family": "f",
                               "choice_ab": rng.choice(["A", "B"], n), "choice_ba": rng.choice(["A", "B"], n),
                               "rationale_ab": "r", "rationale_ba": "r", "failure_ab": None, "failure_ba": None})
              for j in ("judge-one", "judge-two")}
    write_outputs(cap_profile(pairs, tables, {"two": cov}, n_boot=20, seed=0), root / "cap2")
    return {"cap": root / "cap" / "report.html", "cap-two-axes": root / "cap2" / "report.html"}


def _validity(root: Path) -> dict[str, Path]:
    from judgeaudit.probes.io import bundled_probes_path

    rows = [json.loads(line) for line in bundled_probes_path().read_text(encoding="utf-8").splitlines() if line]
    bases = list(dict.fromkeys(r["base_id"] for r in rows))[:6]
    probes = root / "probes.jsonl"
    probes.write_text("".join(json.dumps(r) + "\n" for r in rows if r["base_id"] in bases), encoding="utf-8")
    _cli("validity", "run", "--probes", probes, "--judge", "reference:length", "--judge", "reference:random",
         "--bootstrap", 50, "--regrade", 0, "--out", root / "validity")
    return {"validity": root / "validity" / "report.html"}


def _loop(root: Path) -> dict[str, Path]:
    sys.path.insert(0, str(TESTS / "loop"))
    from scripted import Constant, FixNamedUnits

    spec = importlib.util.spec_from_file_location("_loop_conftest", TESTS / "loop" / "conftest.py")
    loop_conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loop_conftest)

    from judgeaudit.commands.loop import run_loop_command

    d = loop_conftest.write_ifeval_dir(root / "ifeval")   # tests/loop's four-prompt IFEval folder
    judge = Constant({"score": 3, "defects": [{"quote": "x", "reason": "the response uses a comma", "severity": 2}]})
    run_loop_command(task="ifeval", data=d, initial="shipped", responder=FixNamedUnits(), judge=judge,
                     regulators=["control", "score", "blind", "informed", "certificate"], out=root / "loop",
                     rounds=2, votes=1, bootstrap=50, progress=False)
    sys.path.remove(str(TESTS / "loop"))
    return {"loop": root / "loop" / "report.html"}


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    require_browser()
    root = tmp_path_factory.mktemp("reports")
    out: dict[str, Path] = {}
    for build in (_world, _vp, _cap, _validity, _loop):
        out |= build(root)
    return out


@pytest.fixture(scope="module")
def browser(reports, browser):
    """``tests/conftest.py``'s Chromium, started after the runs (Playwright's sync API owns the thread's loop)."""
    return browser


@pytest.fixture(scope="module")
def shown(file_pages, reports):
    """Each report page opened once at each width and shared by the tests that only read it (a test that
    filters a table or edits the page opens its own)."""
    pages: dict = {}

    def get(name: str, width: int):
        if (name, width) not in pages:
            pages[name, width] = file_pages.open(reports[name], width)
        return pages[name, width]

    yield get
    for page in pages.values():
        page.close()


LOOK = """() => {
  const cells = [...document.querySelectorAll('td')].map(e => e.innerText.trim());
  const outside = document.body.cloneNode(true);
  outside.querySelectorAll('table').forEach(t => t.remove());
  const wraps = [...document.querySelectorAll('.table-wrap')].map(w => ({
      wide: w.querySelector('table').scrollWidth > w.clientWidth + 1,
      scrolls: ['auto', 'scroll'].includes(getComputedStyle(w).overflowX),
      inside: w.getBoundingClientRect().right <= document.documentElement.clientWidth + 1}));
  return {cells, text: outside.innerText, wraps, pageWidth: document.documentElement.scrollWidth,
          sections: [...document.querySelectorAll('section > h2')].map(h => h.innerText),
          plots: document.querySelectorAll('.js-plotly-plot .main-svg').length,
          figures: document.querySelectorAll('.js-plotly-plot').length};
}"""


def _look(page) -> dict:
    return page.evaluate(LOOK)


PAGES = ["world", "factorial", "cap", "cap-two-axes", "vp", "validity", "loop"]


@pytest.mark.parametrize("name", PAGES)
def test_every_page_reads_at_desktop_and_phone_widths(reports, shown, name):
    for label, width in WIDTHS.items():
        page = shown(name, width)
        seen = _look(page)
        assert seen["pageWidth"] <= width, f"{name} at {width}px is {seen['pageWidth']}px wide"
        # Python's and JavaScript's words for a missing value ("none" in lower case is a word a table uses:
        # matcher none, no report)
        shown_undefined = [c for c in seen["cells"] if c in ("None", "nan", "NaN", "null", "undefined", "<NA>")]
        assert shown_undefined == [], f"{name}: {shown_undefined[:5]}"
        if "—" in seen["cells"]:
            assert "—" in seen["text"], f"{name}: a table shows — but no footnote says why"
        for w in seen["wraps"]:
            assert w["inside"] and (w["scrolls"] or not w["wide"]), (name, label, w)
        if seen["figures"]:
            assert seen["plots"] >= seen["figures"], f"{name}: {seen['figures']} figures, {seen['plots']} drawn"
        page.screenshot(path=str(reports[name].parent / f"{name}-{label}.png"), full_page=True)
    assert (reports[name].parent / f"{name}-phone.png").stat().st_size > 10_000


def _first_section(page) -> tuple[str, str]:
    first = page.locator("section:not(#summary)").first
    return first.locator("h2").inner_text(), first.inner_text()


def test_world_page_opens_with_the_paired_gain_its_interval_and_test(reports, shown):
    title, text = _first_section(shown("world", WIDTHS["desktop"]))
    result = json.loads((reports["world"].parent / "result.json").read_text())
    gain = next(p for p in result["paired"] if p["metric"] == "balanced_accuracy" and p["b"] == "informed")
    assert title.splitlines()[-1] == "Key finding" and title.startswith("world · tiny:x"), title
    lo, hi = gain["ci"]
    assert f"gain {gain['gain']:+.3f} [{lo:.3f}, {hi:.3f}]" in text, text
    assert "McNemar p = " in text, text


def test_factorial_page_shows_its_finding_and_shapley_chart_before_the_tables(shown):
    page = shown("factorial", WIDTHS["desktop"])
    title = page.locator("section:not(#summary) h2").first.inner_text()
    rows_before_chart = page.evaluate("""() => {
        const chart = document.querySelector('.js-plotly-plot');
        return [...document.querySelectorAll('tr')].filter(
            r => r.compareDocumentPosition(chart) & Node.DOCUMENT_POSITION_FOLLOWING).length; }""")
    assert title.splitlines()[-1] == "Key finding"
    assert rows_before_chart <= 12, f"{rows_before_chart} table rows before the Shapley chart"


def _boxes_overlap(a: dict, b: dict) -> bool:
    return a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"] and \
        a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]


@pytest.mark.parametrize("width", WIDTHS.values())
def test_vp_legend_does_not_cover_the_x_axis_labels(shown, width):
    plot = shown("vp", width).locator(".js-plotly-plot").first
    legend = plot.locator(".legend").first.bounding_box()
    ticks = [t.bounding_box() for t in plot.locator(".xtick text").all()]
    assert legend is not None and len(ticks) >= 3
    hidden = [t for t in ticks if _boxes_overlap(legend, t)]
    assert hidden == [], f"the legend {legend} covers x labels {hidden}"


def test_cap_profile_below_three_axes_is_drawn_as_bars_and_above_as_a_radar(shown):
    page = shown("cap-two-axes", WIDTHS["desktop"])
    bars, polar = page.locator(".barlayer .point").count(), page.locator(".polarlayer .trace").count()
    assert bars == 2 * 2 and polar == 0           # two judges × two conditions, no collapsed radar
    assert shown("cap", WIDTHS["desktop"]).locator(".polarlayer .trace").count() >= 1


def test_page_size_with_plotly_inline_and_from_the_cdn(reports, shown, file_pages):
    inline, cdn = reports["vp"].stat().st_size, reports["vp-cdn"].stat().st_size
    assert inline > 3_000_000 and cdn < 100_000, (inline, cdn)
    # offline (as here) the inline page, as written, draws its figures; the cdn page still shows every table
    cdn_cells = _look(shown("vp-cdn", WIDTHS["desktop"]))["cells"]
    page = file_pages.open(reports["vp"], WIDTHS["desktop"], as_written=True)
    seen = _look(page)
    page.close()
    assert seen["plots"] >= seen["figures"] >= 1 and cdn_cells == seen["cells"]


# ---- the layout checker (tests/pagelayout.py) -------------------------------------------------------------------

BROKEN = """<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">
<script>{plotly}</script></head><body style="margin:0">
<div id="wide" style="width:2000px;background:#eee">a block wider than any screen</div>
<div style="overflow-x:hidden;width:300px"><table id="cut"><tr><td style="white-space:nowrap">{row}</td></tr></table></div>
<div id="p1" style="width:600px;height:150px"></div>
<svg class="drawn" width="120" height="40"><text x="90" y="20">a label past the drawing's edge</text></svg>
<script>
Plotly.newPlot('p1', [{{x:[1,2,3], y:[1,2,3], name:'a legend entry named at some length'}},
  {{x:[1,2,3], y:[3,2,1], name:'another'}}],
  {{title:{{text:'a title under the legend'}}, height:150, width:600, margin:{{l:0, r:0, t:30, b:0}},
   yaxis:{{tickvals:[1, 2], ticktext:['a tick label far too long for a zero margin', 'b']}},
   legend:{{x:0, y:1.2, xanchor:'left', yanchor:'top', orientation:'h'}}}});
</script></body></html>"""


def test_layout_checker_finds_each_problem_on_a_broken_page(file_pages, tmp_path):
    """The checker fails a page built to break: a block wider than the screen, a table cut by a container
    that clips it, a tick label drawn outside its figure, a legend over the title, a crushed plot area and a
    label cut at the edge of a hand-drawn SVG chart (as the card draws its charts)."""
    from pagelayout import layout_problems
    from plotly.offline import get_plotlyjs

    path = tmp_path / "broken.html"
    path.write_text(BROKEN.format(plotly=get_plotlyjs(), row="x " * 200), encoding="utf-8")
    page = file_pages.open(path, WIDTHS["phone"])
    found = layout_problems(page)
    fine = layout_problems(page, min_plot_height=10)
    page.close()
    text = "\n".join(found)
    assert "the document is 2000px wide in a 390px viewport" in text, text
    assert '<div#wide> "a block wider than any screen" spans 0–2000px, beyond the 390px viewport' in text, text
    assert any(p.startswith('<table#cut>') and "hidden or scrolled" in p for p in found), text
    assert any('text "a tick label far too long' in p and "is clipped" in p for p in found), text
    assert any("the legend overlaps" in p for p in found), text
    assert any("its plot area is" in p and "(minimum 160px)" in p for p in found), text
    assert any('(drawn): text "a label past the drawing' in p and "is clipped" in p for p in found), text
    assert not any("its plot area is" in p for p in fine)


@pytest.mark.parametrize("name", PAGES)
def test_every_page_has_no_layout_problem_at_desktop_and_phone_widths(shown, name):
    """No overflow, no cut table, no clipped plot label, no legend over a title and no crushed plot area,
    at 1280 and at 390 px (``tests/pagelayout.py``)."""
    from pagelayout import layout_problems

    problems = []
    for label, width in WIDTHS.items():
        problems += [f"{label}: {p}" for p in layout_problems(shown(name, width))]
    assert problems == [], "\n".join(problems)


def test_a_page_opens_on_its_summary_then_its_contents_and_every_section_names_its_analysis(reports, shown):
    seen = shown("validity", WIDTHS["desktop"]).evaluate("""() => ({
        first: document.querySelector('section').id,
        tocAfter: !!(document.querySelector('#summary').compareDocumentPosition(document.querySelector('nav.toc'))
                     & Node.DOCUMENT_POSITION_FOLLOWING),
        links: [...document.querySelectorAll('nav.toc a')].map(a => a.getAttribute('href')),
        ids: [...document.querySelectorAll('section')].map(s => s.id).filter(i => i !== 'summary'),
        of: [...document.querySelectorAll('section h2')].filter(h => h.closest('section').id !== 'summary')
              .map(h => (h.querySelector('.of') || {}).innerText || ''),
        summary: [...document.querySelectorAll('#summary tbody tr')].map(r => [...r.cells].map(c => c.innerText))})""")
    result = json.loads((reports["validity"].parent / "result.json").read_text())
    assert seen["first"] == "summary" and seen["tocAfter"]
    assert seen["links"] == ["#" + i for i in seen["ids"]]
    assert all(o.startswith("validity · ") for o in seen["of"]), seen["of"]
    for judge, s in result["judges"].items():
        row = next(r for r in seen["summary"] if r[0] == judge and r[2].startswith("S, R"))
        assert f"S {s['S']:.3f} [{s['S_ci'][0]:.3f}, {s['S_ci'][1]:.3f}]" in row[3], row


def test_the_probes_behind_the_validity_numbers_page_and_filter_in_the_browser(reports, file_pages):
    """The validity page's units table shows 20 rows at a time of every judge × probe; filtering to one
    judge's construct edits it did not move on leaves exactly those rows, as verdicts and result.json say."""
    page = file_pages.open(reports["validity"], WIDTHS["desktop"])
    box = page.locator(".units").first
    total = len(json.loads(box.locator("script").inner_text())["rows"])
    first = box.locator("tbody tr").count()
    box.locator("select.f").nth(0).select_option("reference:length")
    box.locator("select.f").nth(2).select_option("did not move")
    shown = box.locator(".info").inner_text()
    cells = box.locator("tbody tr").evaluate_all("rs => rs.map(r => [...r.cells].map(c => c.innerText))")
    page.close()
    probes = [json.loads(x) for x in (reports["validity"].parent.parent / "probes.jsonl").read_text().splitlines()]
    assert total == 2 * len(probes) and first == 20
    assert cells and all(c[0] == "reference:length" and c[2] == "construct" and c[7] == "did not move" for c in cells)
    n = int(re.search(r"of (\d+) \(filtered", shown).group(1))
    assert len(cells) == min(n, 20), shown


def test_a_10000_unit_table_stays_light(file_pages, tmp_path):
    """10,000 units of 300-character texts: the page holds them as JSON (bytes stated) and its document
    draws 5 rows at a phone's width (20 at a desktop's)."""
    from judgeaudit.report.html import Section, units_html, write_page

    n = 10_000
    df = pd.DataFrame({"judge": [f"j{i % 3}" for i in range(n)], "probe": [f"p{i}" for i in range(n)],
                       "outcome": ["did not move", "moved the wrong way"] * (n // 2),
                       "edited text": ["w" * 300] * n, "reply": ["r" * 300] * n})
    path = write_page(tmp_path / "units.html", "units", [Section("Units", units_html(df, caption="c",
                                                                                     filters=("outcome",)))])
    size = path.stat().st_size
    page = file_pages.open(path, WIDTHS["phone"])
    rows = page.locator("tbody tr").count()
    page.locator("select.f").select_option("moved the wrong way")
    info = page.locator(".info").inner_text()
    page.close()
    assert rows == 5 and info == "rows 1–5 of 5000 (filtered from 10000)"
    assert 6_000_000 < size < 7_000_000, size       # 10,000 × ~650 bytes of JSON, no plotly.js


def test_a_long_unbroken_name_wraps_at_a_phones_width(file_pages, tmp_path):
    """A set or path written without spaces (``halueval:/…/data/halueval?part=qa&max_rows=16``) in a paragraph,
    a banner or a heading breaks inside the column instead of widening the page; the checker names such text."""
    from pagelayout import layout_problems

    from judgeaudit.report.html import Section, write_page

    name = "halueval:/home/someone/projects/evaluation/judgeaudit/src/judgeaudit/data/halueval?part=qa&max_rows=16"
    path = write_page(tmp_path / "long.html", "a page", [Section(f"Set {name}", f"<p>Set {name}: 1 row</p>",
                                                                 banners=[f"Read from {name}"])])
    page = file_pages.open(path, WIDTHS["phone"])
    found = layout_problems(page)
    page.evaluate("() => { const p = document.createElement('p'); p.style.overflowWrap = 'normal';"
                  " p.textContent = 'x'.repeat(300); document.body.appendChild(p); }")
    broken = layout_problems(page)
    page.close()
    assert found == [], "\n".join(found)
    assert any('text "xxxxxxxx' in p and "beyond" in p for p in broken), broken


def test_the_items_behind_the_cap_numbers_page_and_filter_in_the_browser(reports, file_pages):
    """The CAP page's units table: filtering to one judge's overall items it got wrong leaves exactly the rows
    the run's units.parquet counts as wrong (share right 0) for that judge, with its verdicts beside them."""
    from judgeaudit.report.cap import unit_frame

    folder = reports["cap"].parent
    df = unit_frame(pd.read_parquet(folder / "units.parquet"), pd.read_parquet(folder / "pair_verdicts.parquet"))
    judge = "arena_hard/fixture-judge-positional"
    want = df[(df["judge"] == judge) & (df["condition"] == "overall (position-averaged)") & (df["outcome"] == "wrong")]
    page = file_pages.open(reports["cap"], WIDTHS["desktop"])
    box = page.locator(".units").first
    total = len(json.loads(box.locator("script").inner_text())["rows"])
    for col, value in (("judge", judge), ("condition", "overall (position-averaged)"), ("outcome", "wrong")):
        box.locator(f'select.f[aria-label="{col}"]').select_option(value)
    cells = box.locator("tbody tr").evaluate_all("rs => rs.map(r => [...r.cells].map(c => c.innerText))")
    info = box.locator(".info").inner_text()
    page.close()
    assert total == len(df) and len(want) >= 1
    assert sorted(c[3] for c in cells) == sorted(want["item"])[:20]
    assert info == f"rows 1–{min(20, len(want))} of {len(want)} (filtered from {len(df)})"
    assert all(c[4] == "wrong" and c[5] == "0" for c in cells), cells


def test_the_rows_behind_the_vp_numbers_filter_to_what_a_member_recovers(reports, file_pages):
    page = file_pages.open(reports["vp"], WIDTHS["phone"])
    box = page.locator(".units").first
    data = json.loads(box.locator("script").inner_text())
    rows, col = data["rows"], data["columns"].index("best member recovers the label")
    shown = box.locator("tbody tr").count()
    box.locator('select.f[aria-label="best member recovers the label"]').select_option("no")
    info = box.locator(".info").inner_text()
    page.close()
    preds = pd.read_parquet(reports["vp"].parent / "predictions.parquet")
    assert len(rows) == len(preds) == 3 * 40 and shown == 5
    missed = sum(r[col] == "no" for r in rows)
    assert info == f"rows 1–{min(5, missed)} of {missed} (filtered from {len(rows)})"


def test_a_cap_run_of_10000_units_stays_light(file_pages, tmp_path):
    """5,000 pairs × 2 judges (10,000 overall units, replies of 300 characters): the units table holds every row
    as JSON (its bytes bounded below) and the document draws 5 of them at a phone's width; filtering works."""
    from judgeaudit.analyses.cap import cap_profile, pair_verdicts
    from judgeaudit.commands.cap import write_outputs
    from judgeaudit.datasets._common import UNAVAILABLE
    from judgeaudit.report.html import set_plotly_mode

    n = 5000
    pairs = pd.DataFrame({"pair_id": [f"p{i}" for i in range(n)], "prompt": "q", "response_a": "a",
                          "response_b": "b", "label": ["A", "B"] * (n // 2), "group": None, "source_set": "big",
                          "subset": None, "condition_a": None, "condition_b": None, "meta": [{}] * n})
    rng = np.random.default_rng(2)
    tables = {j: pd.DataFrame({"pair_id": pairs["pair_id"], "judge_id": j, "family": "f",
                               "choice_ab": rng.choice(["A", "B"], n), "choice_ba": rng.choice(["A", "B"], n),
                               "rationale_ab": "r" * 300, "rationale_ba": "s" * 300, "failure_ab": None,
                               "failure_ba": None}) for j in ("one", "two")}
    cov = {c: UNAVAILABLE for c in ("C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8")}
    set_plotly_mode("cdn")      # the page's own weight, without plotly.js
    try:
        write_outputs(cap_profile(pairs, tables, {"big": cov}, n_boot=20, seed=0), tmp_path / "big",
                      verdicts=pair_verdicts(pairs, tables))
    finally:
        set_plotly_mode("inline")
    path = tmp_path / "big" / "report.html"
    size = path.stat().st_size
    page = file_pages.open(path, WIDTHS["phone"])
    box = page.locator(".units").first
    total = len(json.loads(box.locator("script").inner_text())["rows"])
    drawn = box.locator("tbody tr").count()
    box.locator('select.f[aria-label="judge"]').select_option("two")
    info = box.locator(".info").inner_text()
    page.close()
    assert total == 10_000 and drawn == 5 and info == "rows 1–5 of 5000 (filtered from 10000)"
    assert 6_000_000 < size < 7_500_000, size        # 10,000 × ~690 bytes of JSON (two 300-character replies)
