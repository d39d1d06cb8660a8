"""``judgeaudit probes``: build a probe set, annotate its directions blinded, merge, and apply the bar
(the construct-validity paper, §4.1–4.2 Protocol 1, Table 3; Appendices B, C; Appendix H S4).

    judgeaudit probes build --bases bases.jsonl --generator api:... --verifier api:... \\
        --audited-family google --out build/
    judgeaudit probes annotate init --probes build/probes.jsonl --annotators 3 --db study.sqlite
    judgeaudit probes annotate serve --db study.sqlite
    judgeaudit probes annotate export --db study.sqlite --out answers.jsonl
    judgeaudit probes merge --probes build/probes.jsonl --answers answers.jsonl --out labelled.jsonl
    judgeaudit probes agreement --probes labelled.jsonl --out agreement/
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table

from judgeaudit.commands.verbs import HELP
from judgeaudit.commands.outputs import out_option
from judgeaudit.runtime.context import RunContext
from judgeaudit.commands.common import ALLOW_FAILURES_HELP, DEFAULT_BACKEND, BackendOpt, RayAddressOpt, calls_checked
from judgeaudit.commands.common import ALLOW_SAME_FAMILY, ALLOW_SAME_FAMILY_OLD, ConcurrencyOpt, RetriesOpt, RpmOpt, TimeoutOpt

app = typer.Typer(help=HELP["probes"], no_args_is_help=True)
annotate_app = typer.Typer(help="Blinded human direction annotation in the browser (Appendix C).",
                           no_args_is_help=True)
app.add_typer(annotate_app, name="annotate")
console = Console(stderr=True, soft_wrap=True)
out_console = Console(soft_wrap=True)


def print_frame(df: pd.DataFrame, title: str | None = None, *, index: bool = False) -> None:
    """A DataFrame as a rich table on stdout (floats to 3 decimals)."""
    d = df.reset_index() if index else df
    t = Table(title=title)
    for c in d.columns:
        t.add_column(str(c), overflow="fold")
    for row in d.itertuples(index=False):
        t.add_row(*["—" if (isinstance(v, float) and pd.isna(v)) or v is None else
                    (f"{v:.3f}" if isinstance(v, float) else str(v)) for v in row])
    out_console.print(t)


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [s.strip() for v in values for s in v.split(",") if s.strip()]


@app.command("build")
@calls_checked
def build_cmd(
    bases: Annotated[Path, typer.Option("--bases", help="JSONL of base items: claim, evidence, group, domain"
                                                        "[, base_id]")],
    generator: Annotated[str, typer.Option("--generator", help="judge spec of the generator (family A)")],
    verifier: Annotated[str, typer.Option("--verifier", help="judge spec of the verifier (family B)")],
    out: Annotated[Path, out_option("--out", what="folder", help="output folder")],
    audited_family: Annotated[list[str], typer.Option("--audited-family", help="family of a judge to be "
                                                      "audited on these probes (family C); repeatable")],
    slots: Annotated[list[str] | None, typer.Option("--slots", help="slots to build, comma-separated or "
                                                    "repeated (default: all 12)")] = None,
    generator_family: Annotated[str | None, typer.Option("--generator-family", help="the generator's model family, where its spec does not tell it (default: read from the spec)")] = None,
    verifier_family: Annotated[str | None, typer.Option("--verifier-family", help="the verifier's model family, where its spec does not tell it (default: read from the spec)")] = None,
    allow_same_family: Annotated[bool, typer.Option(ALLOW_SAME_FAMILY, help="allow the generator, verifier and "
                                                    "audited judges to share a family; recorded in the output")] = False,
    allow_shared_family: Annotated[bool, typer.Option(ALLOW_SAME_FAMILY_OLD, hidden=True,
                                                      help=f"the earlier spelling of {ALLOW_SAME_FAMILY}")] = False,
    length_tolerance: Annotated[float, typer.Option("--length-tolerance", help="fixed before generation")] = 0.10,
    store: Annotated[Path | None, out_option("--store", what="store", help="call store (default OUT/calls.sqlite)")] = None,
    concurrency: ConcurrencyOpt = None,
    api_base: Annotated[str | None, typer.Option("--api-base", help="OpenAI-compatible base URL for api: "
                                                 "generator and verifier")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="show a progress bar while the probes are built")] = True,
    allow_failures: Annotated[bool, typer.Option("--allow-failures", help=ALLOW_FAILURES_HELP)] = False,
    backend: BackendOpt = DEFAULT_BACKEND,
    ray_address: RayAddressOpt = None,
    call_timeout: TimeoutOpt = None,
    call_retries: RetriesOpt = None,
    call_rpm: RpmOpt = None,
    *,
    context: RunContext,
) -> None:
    """Generate one edit per (base item, slot), gate it, verify it; write accepted probes and the logs."""
    from judgeaudit.io import write_json, write_jsonl
    from judgeaudit.judges import make_judge
    from judgeaudit.probes.build import build_probes, read_bases
    from judgeaudit.runtime.failures import active as active_calls
    from judgeaudit.runtime.store import CallStore
    from judgeaudit.validate import check_options, output_dir

    check_options(length_tolerance=length_tolerance, concurrency=concurrency)
    output_dir(out, writes=("probes.jsonl", "rejections.jsonl", "yield.csv", "build.json"), inputs=[bases, store])
    base_items = read_bases(bases)
    gen = make_judge(generator, family=generator_family, api_base=api_base)
    ver = make_judge(verifier, family=verifier_family, api_base=api_base)
    with CallStore(store or out / "calls.sqlite") as st:
        res = build_probes(base_items, _split(slots), gen, ver, audited_families=_split(audited_family) or [],
                           allow_shared_family=allow_same_family or allow_shared_family, length_tolerance=length_tolerance, store=st,
                           concurrency=concurrency, progress=progress, context=context)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "probes.jsonl", [p.model_dump(mode="json") for p in res.probes])
    write_jsonl(out / "rejections.jsonl", res.rejections)
    res.yield_table().to_csv(out / "yield.csv", index=False)
    calls = active_calls()
    write_json(out / "build.json", {**res.to_dict(), "bases": str(bases), "generator": gen.id, "verifier": ver.id,
                                    "calls": calls.summary().to_dict() if calls else {}})
    if res.families["override"]:
        console.print("[yellow]family override used and recorded:[/] " + "; ".join(res.families["violations"]))
    print_frame(res.yield_table(), "Per-slot yield")
    if len(res.rejections):
        print_frame(res.rejection_table(), "Rejections by slot and reason", index=True)
    print_frame(res.verifier_notices(), "Verifier notices the edit (App. H S4)")
    console.print(f"{len(res.probes)} probes accepted → {out / 'probes.jsonl'}")


@app.command("merge")
def merge_cmd(
    probes: Annotated[Path, typer.Option("--probes", help="the probe file the study was built from")],
    answers: Annotated[Path, typer.Option("--answers", help="JSONL from `probes annotate export`")],
    out: Annotated[Path, out_option("--out", what="file", help="labelled probe file to write")],
    annotators: Annotated[str | None, typer.Option("--annotators", help="fixed annotator order, comma-separated "
                                                   "(default: study order)")] = None,
) -> None:
    """Write the annotators' labels (fixed order) and facts-differ/basis meta into the probe file."""
    from judgeaudit.io import write_jsonl
    from judgeaudit.probes.io import read_probes
    from judgeaudit.probes.merge import merge_labels, read_answers
    from judgeaudit.validate import output_file

    output_file(out, inputs=[probes, answers])
    rows = read_answers(answers)
    merged, summary = merge_labels(read_probes(probes), rows, _split([annotators]) if annotators else None)
    write_jsonl(out, [p.model_dump(mode="json") for p in merged])
    console.print(f"{summary.n_complete} of {summary.n_probes} probes carry labels from every annotator "
                  f"({', '.join(summary.annotators)}); {summary.n_incomplete} incomplete → {out}")


@app.command("agreement")
def agreement_cmd(
    probes: Annotated[Path, typer.Option("--probes", help="a labelled probe file (`probes merge`)")],
    bar: Annotated[float, typer.Option("--bar", help="raw pairwise agreement bar (pre-set)")] = 0.75,
    out: Annotated[Path | None, out_option("--out", what="folder", help="folder for agreement.json and agreement.html")] = None,
) -> None:
    """Per-slot and per-axis agreement, yield and the bar (Table 3's shape)."""
    from judgeaudit.analyses.agreement import direction_agreement
    from judgeaudit.io import write_json
    from judgeaudit.probes.io import read_probes
    from judgeaudit.records import probes_frame
    from judgeaudit.report.agreement import agreement_section
    from judgeaudit.report.html import write_page
    from judgeaudit.validate import check_options, output_dir

    check_options(bar=bar)
    if out is not None:
        output_dir(out, writes=("agreement.json", "agreement.html"), inputs=[probes])
    res = direction_agreement(probes_frame(read_probes(probes)), bar=bar)
    cols = ["slot", "axis", "n", "agree", "fleiss_kappa", *res.pair_columns, "all_differ", "usable", "yield",
            "cannot_tell_rate", "facts_differ_rate", "note"]
    print_frame(res.per_slot[cols], "Per slot")
    print_frame(res.per_axis[[c for c in cols if c != "slot"]], "Per axis")
    nm = res.not_measurable()
    if nm["slots"] or nm["axes"]:
        console.print(f"[red]not measurable (below {bar:.2f}):[/] " + ", ".join([*nm["slots"], *nm["axes"]]))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_json(out / "agreement.json", res.to_dict())
        write_page(out / "agreement.html", "Human direction annotation", [agreement_section(res)])
        console.print(f"→ {out / 'agreement.json'}, {out / 'agreement.html'}")


@annotate_app.command("init")
def annotate_init(
    probes: Annotated[Path, typer.Option("--probes", help="probe file to annotate")],
    annotators: Annotated[int, typer.Option("--annotators", help="number of annotators")],
    db: Annotated[Path, out_option("--db", what="file", help="study database to create")],
    seed: Annotated[int, typer.Option("--seed", help="seeds the A/B sides and stream orders")] = 0,
    base_url: Annotated[str, typer.Option("--base-url", help="where the app will be served")] =
        "http://127.0.0.1:8765",
) -> None:
    """Create a study and print each annotator's secret link and the admin token, once."""
    from judgeaudit.probes.annotate import init_study
    from judgeaudit.probes.io import read_probes
    from judgeaudit.validate import check_options, output_file

    check_options(annotators=annotators)
    output_file(db, inputs=[probes], field="--db")
    tokens = init_study(db, read_probes(probes), annotators, seed=seed)
    base = base_url.rstrip("/")
    out_console.print("Secret links (shown once; only their hashes are stored):")
    for ann, tok in tokens.annotator_tokens.items():
        out_console.print(f"  {ann}: {base}/#t={tok}", highlight=False)
    out_console.print(f"Admin token (progress and export): {tokens.admin_token}", highlight=False)


@annotate_app.command("serve")
def annotate_serve(
    db: Annotated[Path, typer.Option("--db", help="study database")],
    host: Annotated[str, typer.Option("--host", help="address to listen on (127.0.0.1: this machine only)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="port to listen on")] = 8765,
) -> None:
    """Serve the annotation page."""
    from judgeaudit.probes.annotate.app import serve
    from judgeaudit.probes.annotate.db import StudyDB

    StudyDB(db)  # fail fast with a clear message on a wrong path
    console.print(f"serving {db} on http://{host}:{port}/ (annotators open their own link)")
    serve(db, host=host, port=port)


@annotate_app.command("export")
def annotate_export(
    db: Annotated[Path, typer.Option("--db", help="study database")],
    out: Annotated[Path, out_option("--out", what="file", help="JSONL of answers (one row per annotator and pair)")],
) -> None:
    """Export every saved answer, unblinded (probe id, annotator, direction, basis, same facts)."""
    from judgeaudit.io import write_jsonl
    from judgeaudit.probes.annotate import export_study
    from judgeaudit.validate import output_file

    output_file(out, inputs=[db])
    data: dict[str, Any] = export_study(db)
    write_jsonl(out, data["answers"])
    for p in data["progress"]:
        console.print(f"  {p['annotator_id']}: {p['done']} of {p['total']}")
    console.print(f"{len(data['answers'])} answers → {out}")
