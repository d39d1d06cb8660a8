"""The ``judgeaudit`` command line. One verb group per analysis; bad input exits 2 with one line."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Annotated

import click
import typer
import typer.core
from rich.console import Console
from rich.table import Table

from judgeaudit.commands.outputs import out_option
from judgeaudit.commands.batch import BatchOpt, BatchOutOpt
from judgeaudit.commands.common import ALLOW_FAILURES_HELP, DEFAULT_BACKEND, BackendOpt, RayAddressOpt, calls_checked
from judgeaudit.commands.tracking import MlflowExperimentOpt, MlflowOpt
from judgeaudit.commands.verbs import GROUPS, HELP
from judgeaudit import consent
from judgeaudit.errors import InputError
from judgeaudit.runtime.context import RunContext
from judgeaudit.commands.common import ApiBaseOpt, ConcurrencyOpt, TemplateOpt

# Verb groups that live in their own modules (``commands.verbs``: each exposes a typer app named ``app``), and
# commands that are one function of a module. Each is imported only when its name is on the command line, so that a
# command starts without loading every other command's analyses; the top-level help lists the groups from their
# help in ``commands.verbs`` without importing them.
_COMMANDS = {"gate": ("judgeaudit.commands.gate", "gate_cmd")}   # gate takes POLICY.yaml as its argument


class _LazyGroup(typer.core.TyperGroup):
    """The top-level group: the commands defined here, plus ``GROUPS`` and ``_COMMANDS`` loaded on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*super().list_commands(ctx), *(n for n in (*GROUPS, *_COMMANDS) if n not in self.commands)]

    _listing = False   # True while the group's own help is written

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if self._listing and name not in self.commands and name in GROUPS:   # its line of the listing only
            return click.Command(name, help=HELP[name]) if importlib.util.find_spec(GROUPS[name]) else None
        if name not in self.commands and (name in GROUPS or name in _COMMANDS):
            cmd = _load_command(name)
            if cmd is None:
                return None
            self.add_command(cmd, name)
        cmd = super().get_command(ctx, name)
        if cmd is not None:
            _flags_shown_as_flags(cmd)
        return cmd

    def get_help_option(self, ctx: click.Context):  # noqa: ANN201 - click's own
        return _as_flag(super().get_help_option(ctx))

    def invoke(self, ctx: click.Context):  # noqa: ANN201 - click's own
        """Run the command; what its outputs hold is recorded as its own when it ends, whatever the outcome
        (``validate.record_outputs``: the next run may replace it, no other command may)."""
        from judgeaudit.validate import begin_outputs, record_outputs

        begin_outputs()
        try:
            return super().invoke(ctx)
        finally:
            record_outputs()

    def resolve_command(self, ctx: click.Context, args: list[str]):  # noqa: ANN201 - click's own triple
        found = super().resolve_command(ctx, args)   # the command's module is loaded by now
        from judgeaudit import _startup

        _startup.uninstall()   # from here on Ctrl-C is handled by main()
        return found


def _as_flag(param):  # noqa: ANN001, ANN202 - a click parameter, or None
    """A flag (an option taking no value) shown in help as a flag: no value type (typer would show ``<bool>``)."""
    if param is not None and getattr(param, "is_flag", False) and param.metavar is None:
        param.metavar = ""
    return param


def _flags_shown_as_flags(cmd: click.Command) -> None:
    """Every flag of ``cmd`` and of the commands under it, ``--help`` included, shown as a flag (``_as_flag``)."""
    if getattr(cmd, "_flags_shown", False):
        return
    cmd._flags_shown = True
    for p in cmd.params:
        _as_flag(p)
    _as_flag(cmd.get_help_option(cmd.context_class(cmd)))
    for sub in getattr(cmd, "commands", {}).values():
        _flags_shown_as_flags(sub)


def _load_command(name: str) -> click.Command | None:
    """The click command of a lazily loaded group or command (None when its module is absent from this install)."""
    module = GROUPS.get(name) or _COMMANDS[name][0]
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:
            raise
        return None
    if name in GROUPS:
        cmd = typer.main.get_group(mod.app)
    else:
        one = typer.Typer(pretty_exceptions_enable=False, add_completion=False)
        one.command(name)(getattr(mod, _COMMANDS[name][1]))
        cmd = typer.main.get_command(one)
    cmd.name = name
    return cmd


app = typer.Typer(cls=_LazyGroup, help="Audit LLM-as-a-judge instruments: is the judge valid, not just reliable?",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)
judges_app = typer.Typer(help="Judge backends.", no_args_is_help=True)
store_app = typer.Typer(help="The resumable call store.", no_args_is_help=True)
app.add_typer(judges_app, name="judges")
app.add_typer(store_app, name="store")
console = Console(stderr=True, soft_wrap=True)
ALLOW_CODE_HELP = ("run the Python code (python: judges) that a file names, e.g. an experiment file's judges; "
                   "a file is data, so its code runs only with this flag (a python: spec typed on the command "
                   "line needs none)")


@app.callback()
def _page_options(
    plotly: Annotated[str, typer.Option("--plotly", envvar="JUDGEAUDIT_PLOTLY",
                                        help="how every report.html carries plotly.js: inline (default; the page "
                                             "works offline) or cdn (a small page that loads plotly.js from the "
                                             "plotly CDN)")] = "inline",
    allow_code: Annotated[bool, typer.Option("--allow-code", help=ALLOW_CODE_HELP)] = False,
) -> None:
    """Audit LLM-as-a-judge instruments: is the judge valid, not just reliable?"""
    from judgeaudit.report.pagemode import set_plotly_mode

    set_plotly_mode(plotly)
    if allow_code:
        consent.allow_code()


@judges_app.command("list")
def judges_list() -> None:
    """List the judge backends and their spec syntax."""
    from judgeaudit.judges import registered

    table = Table("backend", "spec")
    for name, help_text in registered().items():
        table.add_row(name, help_text)
    Console().print(table)


@app.command("judge")
@calls_checked
def judge_cmd(
    judge: Annotated[str, typer.Option("--judge", help="judge spec, e.g. local, api:openai/gpt-4o-mini")],
    input: Annotated[Path, typer.Option("--input", help="JSONL of items")],
    out: Annotated[Path, out_option("--out", what="folder", help="output folder")],
    form: Annotated[str, typer.Option("--form", help="graded | pairwise | defects | label | sentences")] = "graded",
    template: TemplateOpt = None,
    store: Annotated[Path | None, out_option("--store", what="store", help="call store (default OUT/calls.sqlite)")] = None,
    concurrency: ConcurrencyOpt = None,
    api_base: ApiBaseOpt = None,
    rpm: Annotated[float | None, typer.Option("--rpm", help="requests per minute limit")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="per-call timeout, seconds")] = 120.0,
    retries: Annotated[int, typer.Option("--retries", help="retries of a failed call (at most 20)")] = 5,
    allow_failures: Annotated[bool, typer.Option("--allow-failures", help=ALLOW_FAILURES_HELP)] = False,
    backend: BackendOpt = DEFAULT_BACKEND,
    ray_address: RayAddressOpt = None,
    *,
    context: RunContext,
) -> None:
    """Judge every item of a JSONL file; writes OUT/verdicts.jsonl, OUT/verdicts.parquet and OUT/result.json
    (failed calls and parse failures per judge)."""
    from judgeaudit.io import write_json, write_jsonl, write_parquet
    from judgeaudit.judges import make_judge
    from judgeaudit.records import verdicts_frame
    from judgeaudit.runtime.executor import RetryPolicy, run
    from judgeaudit.runtime.failures import summarise
    from judgeaudit.runtime.requests import read_requests
    from judgeaudit.runtime.store import CallStore
    from judgeaudit.validate import check_options, output_dir

    check_options(concurrency=concurrency, rpm=rpm, timeout=timeout, retries=retries)
    output_dir(out, writes=("verdicts.jsonl", "verdicts.parquet"), inputs=[input, store])
    requests = read_requests(input, form)
    j = make_judge(judge, api_base=api_base)
    if template is not None:
        j = _templated(j, template, form, requests)
    with CallStore(store or out / "calls.sqlite") as cs:
        verdicts = run(j, requests, store=cs, concurrency=concurrency, rpm=rpm,
                       policy=RetryPolicy(max_retries=retries, timeout=timeout), context=context)
    df = verdicts_frame(verdicts)
    write_jsonl(out / "verdicts.jsonl", df)
    write_parquet(out / "verdicts.parquet", df)
    rec = j.template_record(form)
    write_json(out / "result.json", {"judge": j.id, **({"template": rec} if rec is not None else {}),
                                     **({"scale": j.scale.to_dict()} if j.scale is not None else {}),
                                     "calls": summarise(df).to_dict()})
    n_err = int(df["error"].notna().sum())
    n_pf = int((df["error"].isna() & ~df["parse_ok"]).sum())
    console.print(f"{len(df)} verdicts → {out}/verdicts.jsonl ({n_err} failed calls, {n_pf} parse failures)")
    if n_err:
        console.print("[yellow]failed calls are kept in the store and retried on the next run[/yellow]")


def _templated(j, template: str, form: str, requests: list):  # noqa: ANN001, ANN202 - judges.Judge
    """``j`` rendering and reading with ``template`` (a built-in name or a file; rendered in the Jinja2 sandbox),
    checked before any call: the backend takes templates, the spec names none of its own, the template answers
    ``form`` requests, and every request renders."""
    from judgeaudit.judges.base import with_template
    from judgeaudit.judges.templates import get_template

    t = get_template(template)
    if not j.takes_template:
        raise InputError(f"judge {j.id}: the {j.spec.backend} backend takes no template (the api and local backends "
                         "do)", field="--template")
    if j.template is not None:
        raise InputError(f"judge {j.id} names a template of its own ({j.template.name}); give one or the other",
                         field="--template")
    if t.form != form:
        raise InputError(f"template {t.name} answers {t.form} requests, not {form} (--form)", field="--template")
    j = with_template(j, template)
    for r in requests:          # a field the items lack, or a sandbox refusal: one line before the first call
        j.render(r)
    return j


def _open_store(store: Path):  # noqa: ANN202 - CallStore is imported lazily
    """An existing call store, opened read-only (``InputError`` when absent, damaged or not a store)."""
    from judgeaudit.runtime.store import CallStore

    return CallStore(store, readonly=True)


def _warn_skipped(cs) -> None:  # noqa: ANN001
    if cs.bad_rows:
        console.print(f"warning: {cs.path}: {len(cs.bad_rows)} unreadable row(s) skipped and not counted",
                      highlight=False)


@store_app.command("stats")
def store_stats(store: Annotated[Path, typer.Option("--store", help="the call store to read (a calls.sqlite file)")]) -> None:
    """Calls, failures, parse failures, tokens and cost per judge."""
    with _open_store(store) as cs:
        df = cs.stats()
        _warn_skipped(cs)
    rows = [["—" if v is None or v != v else f"{v:.4g}" if isinstance(v, float) else str(v) for v in row]
            for row in df.itertuples(index=False)]
    out = Console()
    if not out.is_terminal:   # piped or redirected: tab-separated full rows, nothing cut to a width
        print("\t".join(map(str, df.columns)))
        for r in rows:
            print("\t".join(r))
        return
    table = Table(*df.columns)
    for r in rows:
        table.add_row(*r)
    out.print(table)


@store_app.command("export")
def store_export(store: Annotated[Path, typer.Option("--store", help="the call store to read (a calls.sqlite file)")],
                 out: Annotated[Path, out_option("--out", what="file", help="a .parquet or .jsonl file")]) -> None:
    """Export every stored call to Parquet or JSONL (replacing only an earlier export, never another file)."""
    from judgeaudit.runtime.store import is_export
    from judgeaudit.validate import output_file

    output_file(out, inputs=[store])
    if out.exists() and not is_export(out):
        raise InputError("exists and is not an earlier store export (a run's output or another file); refusing "
                         "to replace it — choose a new name", path=out, field="--out")
    with _open_store(store) as cs:
        cs.export(out)
        _warn_skipped(cs)
        console.print(f"{len(cs) - len(cs.bad_rows)} calls → {out}")


@app.command("run")
def run_experiment(
    experiment: Annotated[Path, typer.Argument(help="experiment YAML file")],
    allow_failures: Annotated[bool, typer.Option("--allow-failures", help=ALLOW_FAILURES_HELP + " (or "
                                                 "allow_failures: true in the file)")] = False,
    backend: BackendOpt = DEFAULT_BACKEND,
    ray_address: RayAddressOpt = None,
    batch: BatchOpt = None,
    batch_out: BatchOutOpt = None,
    mlflow: MlflowOpt = None,
    mlflow_experiment: MlflowExperimentOpt = None,
    allow_code: Annotated[bool, typer.Option("--allow-code", help=ALLOW_CODE_HELP)] = False,
) -> None:
    """Run an experiment described by one YAML file (see judgeaudit.experiment): analysis validity, cap, world,
    loop, card, migrate or vp, with the options of the command of that name. --batch, --batch-out, --mlflow and
    --mlflow-experiment (or the file's batch, batch_out, mlflow and mlflow_experiment keys) act as on that
    command; a flag replaces the file's key. A python: judge the file names is refused (before anything runs)
    unless --allow-code is given."""
    from judgeaudit.commands.common import command_calls
    from judgeaudit.experiment import command_options, load_experiment, yaml_error

    if allow_code:
        consent.allow_code()
    exp = load_experiment(experiment)
    flags = {"batch": batch, "batch_out": batch_out, "mlflow": mlflow, "mlflow_experiment": mlflow_experiment}
    try:
        opts = command_options(exp, flags, allow_failures=allow_failures, backend=backend, ray_address=ray_address)
        exp = exp.model_copy(update={"allow_failures": opts["allow_failures"]})   # the flag or the file's key
        with command_calls(f"{exp.analysis} run", opts) as context:
            _EXPERIMENT_RUNNERS[exp.analysis](exp, context)
    except InputError as e:
        raise yaml_error(exp, e, flags) from None


def _run_validity_experiment(exp, context: RunContext) -> None:  # noqa: ANN001 - experiment.ValidityExperiment
    from judgeaudit.analyses.validity.options import OPTIONS
    from judgeaudit.commands.validity import run_command
    from judgeaudit.experiment import judge_specs

    run_command({**{o.name: getattr(exp, o.name) for o in OPTIONS.in_file()}, "judges": judge_specs(exp)},
                echo=console, context=context)


def _run_world_experiment(exp, context: RunContext) -> None:  # noqa: ANN001 - experiment.WorldExperiment
    from judgeaudit.analyses.world.options import OPTIONS
    from judgeaudit.commands.world import run_command
    from judgeaudit.experiment import judge_specs

    run_command({**{o.name: getattr(exp, o.name) for o in OPTIONS.in_file()}, "judges": judge_specs(exp)},
                echo=console, context=context)


def _run_loop_experiment(exp, context: RunContext) -> None:  # noqa: ANN001 - experiment.LoopExperiment
    from judgeaudit.commands.loop import run_command
    from judgeaudit.loop.options import OPTIONS

    run_command({o.name: getattr(exp, o.name) for o in OPTIONS.in_file()}, echo=console, context=context)


def _run_card_experiment(exp, context: RunContext) -> None:  # noqa: ANN001 - experiment.CardExperiment
    from judgeaudit.commands.card import run_command

    run_command(exp.judge, list(exp.from_), exp.out, exp.ledger, run_missing=exp.run_missing, yes=exp.yes,
                confirm=None, n_boot=exp.bootstrap, echo=console, context=context)


def _run_migrate_experiment(exp, context: RunContext) -> None:  # noqa: ANN001 - experiment.MigrateExperiment
    from judgeaudit.commands.migrate import run_command

    run_command(exp.old, exp.new, exp.items, exp.out, form=exp.form, labels=exp.labels, threshold=exp.threshold,
                margins=[f"{k}={v}" for k, v in exp.margins.items()], regrade=exp.regrade,
                link_method=exp.link_method, from_=list(exp.from_) or None, old_card=exp.old_card,
                new_card=exp.new_card, audit_margin=exp.audit_margin, n_boot=exp.bootstrap, seed=exp.seed,
                store=exp.store, concurrency=exp.concurrency, api_base=exp.api_base, echo=console, context=context)




def _run_cap_experiment(exp, context: RunContext) -> None:  # noqa: ANN001 - experiment.CapExperiment
    from judgeaudit.analyses.cap.options import OPTIONS
    from judgeaudit.commands.cap import run_command
    from judgeaudit.experiment import judge_specs

    run_command({**{o.name: getattr(exp, o.name) for o in OPTIONS.in_file()}, "judges": judge_specs(exp) or None},
                echo=console, context=context)


def _run_vp_experiment(exp, context: RunContext) -> None:  # noqa: ANN001 - experiment.VpExperiment
    from judgeaudit.analyses.validation_power.options import OPTIONS
    from judgeaudit.commands.vp import run_command

    run_command({o.name: getattr(exp, o.name) for o in OPTIONS.in_file()}, echo=console, context=context)


_EXPERIMENT_RUNNERS = {"validity": _run_validity_experiment, "world": _run_world_experiment,
                       "loop": _run_loop_experiment, "card": _run_card_experiment,
                       "migrate": _run_migrate_experiment, "cap": _run_cap_experiment, "vp": _run_vp_experiment}


@app.command("demo")
@calls_checked
def demo_cmd(
    out: Annotated[Path, out_option("--out", what="folder", help="output folder")] = Path("demo-out"),
    bootstrap: Annotated[int | None, typer.Option("--bootstrap", help="resamples (default 500, 2000 with "
                                                                      "--full)")] = None,
    full: Annotated[bool, typer.Option("--full", help="the default runs at their full sizes (the demo is cut "
                                                      "to run in minutes otherwise)")] = False,
    allow_failures: Annotated[bool, typer.Option("--allow-failures", help=ALLOW_FAILURES_HELP)] = False,
    backend: BackendOpt = DEFAULT_BACKEND,
    ray_address: RayAddressOpt = None,
    *,
    context: RunContext,
) -> None:
    """The main job: the bundled probes through the embedded local judge and the reference judges,
    plus validation-power and CAP sections on the bundled public-set slices, in one report."""
    from judgeaudit.demo import run_demo
    from judgeaudit.validate import check_options, output_dir

    check_options(bootstrap=bootstrap)
    output_dir(out, writes=("report.html",))

    run_demo(out, n_boot=bootstrap, full=full, context=context)


TERMINATED_EXIT = 143
"""Exit status after SIGTERM (128 + 15); Ctrl-C exits 130."""
_terminated: list[int] = []


def _on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM (``kill``, a scheduler's stop) ends the command the way Ctrl-C does: through the SIGINT handler
    in place (asyncio's while judge calls run: no new call, the calls in flight stored, the interrupted line),
    else as a ``KeyboardInterrupt``; ``main`` then exits 143."""
    import signal

    from judgeaudit import _startup

    _terminated.append(signum)
    handler = signal.getsignal(signal.SIGINT)
    if handler is _startup.interrupted:   # still loading the command's modules: nothing ran
        sys.stderr.write(_startup.MESSAGE + "\n")
        sys.stderr.flush()
        import os

        os._exit(TERMINATED_EXIT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:   # SIGINT ignored (inherited from a background job) or at its default: SIGTERM still interrupts
        signal.default_int_handler(signal.SIGINT, frame)


def _install_sigterm() -> None:
    """Route SIGTERM to ``_on_sigterm``, unless the process inherited it ignored (honoured, as for SIGINT)."""
    import signal

    try:
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:   # not the main thread (the command line called from a library)
        pass


def _interrupt_exit() -> int:
    return TERMINATED_EXIT if _terminated else 130


def main() -> None:
    """Entry point: bad input prints one line naming file, line and field, and exits 2. The code a
    ``python:`` spec names runs when the spec is typed here or the command line says --allow-code
    (``judgeaudit.consent``)."""
    with consent.command_line(sys.argv[1:], allow_code=False):
        _main()


def _main() -> None:
    _install_sigterm()
    try:
        app()
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        _interrupted()
        sys.exit(_interrupt_exit())
    except MemoryError:
        print("error: not enough memory for this run (lower --bootstrap, --permutations, --votes or "
              "--max-items); nothing after the last stored call was lost", file=sys.stderr)
        sys.exit(1)
    except SystemExit as e:
        if e.code == 130:   # typer turns Ctrl-C into exit 130
            _interrupted()
            sys.exit(_interrupt_exit())
        raise


def _interrupted() -> None:
    """The interrupted line, unless a judge run already printed its own (with counts and store)."""
    executor = sys.modules.get("judgeaudit.runtime.executor")
    if executor is None or not executor.reported_interrupts:
        console.print("[yellow]interrupted: every completed call is in the store; rerun the same command to "
                      "resume[/yellow]")


if __name__ == "__main__":
    main()
