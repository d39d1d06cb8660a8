"""``judgeaudit calibrate``: the number a user may report — a judge's verdicts on a large set plus human
labels on a subset give the target (mean score, pass rate, accuracy, win rate) with an interval that
carries the judge's errors (PPI++; Rogan–Gladen for a binary judge), beside the naive judge-only and
the human-only intervals, the judge's agreement with the humans and the labels it is worth.

Writes OUT/result.json, OUT/report.md and OUT/report.html."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP
from judgeaudit.analyses.calibrate.options import OPTIONS
from judgeaudit.commands.declared import declared
from judgeaudit.errors import InputError

app = typer.Typer(help=HELP["calibrate"])
console = Console(stderr=True, soft_wrap=True)


def run_calibrate(verdicts: str, labels: Path, target: str, out: Path, *, judge: str | None = None,
                  threshold: float | None = None, level: float = 0.95, n_boot: int = 2000, seed: int = 0,
                  engine: str = "builtin", scale: str | None = None, strata: Path | None = None) -> Any:
    """Read, estimate, write; the result as written (``CalibrateFile``, read back from result.json)."""
    from judgeaudit.analyses.calibrate import TARGETS, calibrate
    from judgeaudit.analyses.calibrate.schema import SCHEMA_VERSION, CalibrateFile
    from judgeaudit.commands.calibrate_inputs import WIN_NAMES, join, read_labels, read_verdicts, verdict_values
    from judgeaudit.report.calibrate import calibrate_markdown, headline, write_calibrate_html
    from judgeaudit.runinfo import write_result
    from judgeaudit.validate import check_options, output_dir

    if target not in TARGETS:
        raise InputError(f"must be one of {', '.join(TARGETS)}, got {target!r}", field="--target")
    if not 0.5 <= level < 1:
        raise InputError(f"must lie in [0.5, 1), got {level}", field="--level")
    if engine not in ("builtin", "ppi-python"):
        raise InputError(f"must be builtin or ppi-python, got {engine!r}", field="--engine")
    check_options(bootstrap=n_boot)
    bounds = _scale(scale, target)
    output_dir(out, writes=("result.json", "report.md", "report.html"), inputs=[labels] + ([strata] if strata else []))
    v = read_verdicts(verdicts, judge)
    values, all_ids, unusable, what = verdict_values(v, target, threshold)
    y = read_labels(labels, target)
    table, dropped = join(values, all_ids, y, labels)
    n_lab = int(table["y"].notna().sum())
    if bounds is not None:
        outside = table[(table["y"] < bounds[0]) | (table["y"] > bounds[1])]
        if len(outside):
            i = outside["id"].iloc[0]
            raise InputError(f"label {outside['y'].iloc[0]:g} of id {i!r} lies outside --scale {scale}", path=labels,
                             line=y.attrs.get("lines", {}).get(i), field="label")
        if ((table["yhat"] < bounds[0]) | (table["yhat"] > bounds[1])).any():
            raise InputError(f"a verdict lies outside --scale {scale}", field="--scale")
    if n_lab < 2 or len(table) - n_lab < 2:
        raise InputError(f"needs at least 2 labelled and 2 unlabelled items with a usable verdict; got {n_lab} "
                         f"labelled and {len(table) - n_lab} unlabelled", path=labels, field="label")
    res = calibrate(table, target, level=level, n_boot=n_boot, seed=seed,
                    categories=WIN_NAMES if target == "win_rate" else None, engine=engine, scale=bounds)
    d = res.to_dict()
    notes = list(d["notes"])
    if strata is not None:
        d["stratified"] = _stratified(strata, table, res, level, seed)
        notes = [n for n in notes if not n.startswith("the labels may not")]   # drawn per stratum by design
        notes.insert(0, "labels drawn per stratum: the pooled rows (PPI++, PPI, human-only, Rogan–Gladen) treat the "
                        "labels as one uniformly random subset and do not hold when the strata were sampled at "
                        "different rates; the stratified PPI++ row does")
        if d["stratified"]["random_subset_flagged"]:
            notes.append("the labels may not be a uniformly random subset within their strata: a stratum's "
                         "labelled verdicts differ from its unlabelled ones (Fisher/permutation, Bonferroni over "
                         "strata); the stratified interval assumes random draws within each stratum")
    if unusable:
        notes.insert(0, f"{unusable} verdict(s) unusable (failed call, parse failure or no value for the target): "
                        "their items enter no estimate")
    if dropped:
        notes.insert(0, f"{len(dropped)} labelled item(s) have no usable verdict and enter no estimate "
                        f"(first: {dropped[0]}); if the judge fails more on some kind of item, every estimate "
                        "here describes the items it answered")
    d |= {"judge": v.judge, "verdicts": v.source, "labels": str(labels), "verdict_value": what,
          "threshold": threshold, "seed": seed, "n_boot": n_boot, "unusable_verdicts": unusable,
          "labelled_without_verdict": dropped, "notes": notes}
    payload = {"schema_version": SCHEMA_VERSION, "calibrate": d, "judge": v.judge}
    CalibrateFile.of(payload)   # what the readers read is there, under the names they read it by
    out.mkdir(parents=True, exist_ok=True)
    write_result(out / "result.json", payload, inputs={"verdicts": v.path, "labels": labels})
    written = CalibrateFile.read(out / "result.json")
    run = written.calibrate
    (out / "report.md").write_text(calibrate_markdown(run), encoding="utf-8")
    write_calibrate_html(run, out / "report.html")
    for line in headline(run):
        print(line)
    return written


def run_plan(width: float | None, *, verdicts: str | None, labels: Path | None, out: Path | None, target: str,
             judge: str | None, threshold: float | None, scale: str | None, prevalence: float | None,
             tpr: float | None, tnr: float | None, unlabelled: int | None, sets: int, seed: int) -> dict:
    """``--plan``: the labels needed for a 95% interval of ``width``, from stated rates or a pilot."""
    from judgeaudit.analyses.calibrate.plan import plan_binary, plan_lines, plan_pairs

    if width is None or not 0 < width:
        raise InputError("--plan needs a positive --width (the 95% interval's target width)", field="--width")
    stated = {"--prevalence": prevalence, "--tpr": tpr, "--tnr": tnr}
    if any(v is not None for v in stated.values()):
        for name, v in stated.items():
            if v is None or not 0 <= v <= 1:
                raise InputError(f"--plan from stated rates needs {', '.join(stated)} in [0, 1] and --unlabelled",
                                 field=name)
        if not 0 < prevalence < 1 or tpr + tnr <= 1:
            raise InputError("needs 0 < prevalence < 1 and TPR + TNR > 1", field="--prevalence")
        if unlabelled is None or unlabelled < 2:
            raise InputError("--plan from stated rates needs --unlabelled N (N ≥ 2)", field="--unlabelled")
        plan = plan_binary(width, prevalence, tpr, tnr, unlabelled, sets=sets, seed=seed)
    elif verdicts is not None and labels is not None:
        from judgeaudit.commands.calibrate_inputs import join, read_labels, read_verdicts, verdict_values

        v = read_verdicts(verdicts, judge)
        values, all_ids, _, _ = verdict_values(v, target, threshold)
        table, _ = join(values, all_ids, read_labels(labels, target), labels)
        lab = table["y"].notna()
        if lab.sum() < 2:
            raise InputError("a pilot needs at least 2 labelled items with a usable verdict", path=labels,
                             field="label")
        y, yh = table.loc[lab, "y"].to_numpy(float), table.loc[lab, "yhat"].to_numpy(float)
        bounds = _scale(scale, target) or ((0.0, 1.0) if target != "mean" else
                                           (float(min(y.min(), yh.min())), float(max(y.max(), yh.max()))))
        n_u = unlabelled if unlabelled is not None else int((~lab).sum())
        if n_u < 2:
            raise InputError("needs at least 2 unlabelled items (or --unlabelled N)", field="--unlabelled")
        plan = plan_pairs(width, y, yh, n_u, bounds, sets=sets, seed=seed)
    else:
        raise InputError("--plan needs a pilot (--verdicts and --labels) or --prevalence, --tpr, --tnr and "
                         "--unlabelled", field="--plan")
    if out is not None:
        import json

        from judgeaudit.validate import output_dir

        output_dir(out, writes=("plan.json",), inputs=[labels] if labels else [])
        out.mkdir(parents=True, exist_ok=True)
        (out / "plan.json").write_text(json.dumps({"calibrate_plan": plan}, indent=2), encoding="utf-8")
    for line in plan_lines(plan):
        print(line)
    return plan


def _stratified(path: Path, table, res, level: float, seed: int) -> dict:  # noqa: ANN001
    """The stratified PPI++ block from ``--strata`` (id, stratum for every judged item)."""
    from judgeaudit.analyses.calibrate.estimate import BINARY
    from judgeaudit.analyses.calibrate.strata import stratified
    from judgeaudit.io import read_table

    df = read_table(path)
    lines = df.attrs.get("lines") or list(range(1, len(df) + 1))
    idcol = next((c for c in ("id", "request_id", "item_id") if c in df.columns), None)
    if idcol is None or "stratum" not in df.columns:
        raise InputError("a strata file needs 'id' and 'stratum' columns", path=path,
                         field="id" if idcol is None else "stratum")
    of: dict[str, str] = {}
    for row, (i, s) in enumerate(zip(df[idcol], df["stratum"], strict=True)):
        if s is None or (isinstance(s, float) and s != s) or not str(s).strip():
            raise InputError("blank stratum", path=path, line=lines[row], field="stratum")
        of[str(int(i)) if isinstance(i, float) and i.is_integer() else str(i)] = str(s).strip()
    missing = [i for i in table["id"] if i not in of]
    if missing:
        raise InputError(f"{len(missing)} judged item(s) have no stratum (first: {missing[0]!r}); every judged item "
                         "needs one, the weights are the strata's shares of the judged items", path=path,
                         field="id")
    try:
        return stratified(table["yhat"].to_numpy(float), table["y"].to_numpy(float),
                          table["id"].map(of).to_numpy(), lo=res.scale[0], hi=res.scale[1],
                          binary=res.target in BINARY, level=level, seed=seed)
    except ValueError as e:
        raise InputError(str(e), path=path, field="stratum") from None


def _scale(text: str | None, target: str) -> tuple[float, float] | None:
    if text is None:
        return None
    if target != "mean":
        raise InputError("applies to --target mean only (rates lie on [0, 1])", field="--scale")
    try:
        lo, hi = (float(x) for x in text.split(","))
    except ValueError:
        raise InputError(f"must be LOW,HIGH (e.g. 1,5), got {text!r}", field="--scale") from None
    if not lo < hi:
        raise InputError(f"LOW must be below HIGH, got {text!r}", field="--scale")
    return lo, hi


@app.callback(invoke_without_command=True)
@declared(OPTIONS)
def calibrate_cmd(**options: Any) -> None:
    """Estimate the target with PPI++ (and Rogan–Gladen for a binary judge) from verdicts plus human labels."""
    o = {x.name: options[x.keyword] for x in OPTIONS.on_command()}
    verdicts, labels, out, target, judge, threshold, scale, seed = (
        o[k] for k in ("verdicts", "labels", "out", "target", "judge", "threshold", "scale", "seed"))
    if o["plan"]:
        sets = o["sets"]
        if not 10 <= sets <= 100_000:
            raise InputError(f"must lie in [10, 100000], got {sets}", field="--sets")
        run_plan(o["width"], verdicts=verdicts, labels=labels, out=out, target=target, judge=judge,
                 threshold=threshold, scale=scale, prevalence=o["prevalence"], tpr=o["tpr"], tnr=o["tnr"],
                 unlabelled=o["unlabelled"], sets=sets, seed=seed)
        return
    for name, v in (("--verdicts", verdicts), ("--labels", labels), ("--out", out)):
        if v is None:
            raise InputError("is required (or give --plan)", field=name)
    run_calibrate(verdicts, labels, target, out, judge=judge, threshold=threshold, level=o["level"],
                  n_boot=o["bootstrap"], seed=seed, engine=o["engine"], scale=scale, strata=o["strata"])
