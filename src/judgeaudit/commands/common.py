"""What several verb groups share: building judges from specs and running them through the store."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from judgeaudit.card.numbers import with_ci
from judgeaudit.commands import tracking
from judgeaudit.commands.batch import batching
from judgeaudit.errors import InputError
from judgeaudit.judges import Judge, make_judge
from judgeaudit.runtime import backends
from judgeaudit.runtime.context import RunContext
from judgeaudit.runtime.batch import BatchSink
from judgeaudit.runtime.failures import CallSummary, Recorder, recording

from judgeaudit import options as declared_options
from judgeaudit.commands.declared import annotation

ALLOW_FAILURES_HELP = declared_options.ALLOW_FAILURES.help
DEFAULT_BACKEND = backends.DEFAULT
BackendOpt = Annotated[str, typer.Option(
    "--backend", help=f"where the work runs: {' | '.join(backends.names())} (asyncio: this process, or --jobs "
    "local processes for vp audit; ray: Ray workers, pip install 'judgeaudit\\[ray]'); judge calls are stored by "
    "this process either way")]
TimeoutOpt = annotation(declared_options.TIMEOUT)
RetriesOpt = annotation(declared_options.RETRIES)
RpmOpt = annotation(declared_options.RPM)
ApiBaseOpt = annotation(declared_options.API_BASE)
"""The call options every command that calls judges declares, as parameters ``call_timeout``, ``call_retries``,
``call_rpm`` and ``api_base`` (``calls_checked`` builds its ``RunContext`` of them; ``run_context`` for a command
without it)."""

ConcurrencyOpt = annotation(declared_options.CONCURRENCY)
SEED_HELP = declared_options.SEED.help
SeedOpt = annotation(declared_options.SEED)
BOOTSTRAP_HELP = declared_options.BOOTSTRAP.help
BootstrapOpt = annotation(declared_options.BOOTSTRAP)
STORE_HELP = declared_options.STORE_HELP
StoreOpt = annotation(declared_options.STORE)
"""Options several commands share, declared once in ``judgeaudit.options``."""

ALLOW_SAME_FAMILY = "--allow-same-family"
ALLOW_SAME_FAMILY_OLD = "--allow-shared-family"   # an earlier spelling, still accepted (hidden)

CONSTRUCT_VALIDITY = declared_options.CONSTRUCT_VALIDITY
BLIND_SPOT = declared_options.BLIND_SPOT
CAP_PAPER = declared_options.CAP_PAPER
"""The papers whose definitions the commands implement, as help texts cite them."""

def with_interval(value: float | None, ci: object = None, *, digits: int = 3, pct: bool = False) -> str:
    """``value [lo, hi]`` as the terminal summaries print an estimate with its interval: ``card.numbers.with_ci``
    at a fixed ``digits`` decimals (``pct``: as percentages); ``—`` for no value, the value alone where it has no
    interval."""
    return with_ci(value, ci, digits=digits, pct=pct)


TemplateOpt = annotation(declared_options.TEMPLATE)

RayAddressOpt = Annotated[str | None, typer.Option(
    "--ray-address", help="Ray cluster for --backend ray: HOST:PORT, ray://HOST:10001 or auto (default: "
    "RAY_ADDRESS, else a local instance)")]


def build_judges(specs: list[str | dict], *, api_base: str | None = None,
                 template: str | None = None) -> list[Judge]:
    """One judge per spec; a replay file holding several judges becomes one judge per judge id.

    A spec is a string (``local``) or a mapping with ``spec`` and backend options
    (``{"spec": "api:openai/gpt-4o-mini", "family": "openai", "temperature": 0}``). ``template`` (a
    command's ``--template``: a file or a built-in name) is used by every judge that renders prompts
    and names no template of its own.
    """
    from judgeaudit.judges.replay import replay_judges

    if template is not None:   # a bad template fails before any judge is built
        from judgeaudit.judges.templates import get_template

        get_template(template)
    judges: list[Judge] = []
    for spec in specs:
        if isinstance(spec, dict):
            opts = {k: v for k, v in spec.items() if k != "spec"}
            opts.setdefault("api_base", api_base)
            judges.append(make_judge(spec["spec"], **opts))
            continue
        if spec.startswith("replay:") and "judge=" not in spec:
            judges += replay_judges(spec.removeprefix("replay:"))  # one read of the file for all its judges
            continue
        judges.append(make_judge(spec, api_base=api_base))
    if template is not None:
        from judgeaudit.judges.base import with_template

        judges = [with_template(j, template) if j.takes_template and j.template is None else j for j in judges]
    seen: set[str] = set()
    for j in judges:
        if j.id in seen:
            raise InputError(f"judge id {j.id!r} given twice", field="judge")
        seen.add(j.id)
    warn_retirements(judges)
    return judges


def warn_retirements(judges: list[Judge], echo: Console | None = None) -> list[str]:
    """Print (stderr) and return a line for each judge whose model LiteLLM's map retires soon or has retired
    (``judges.retirement``)."""
    from judgeaudit.judges.retirement import retirement_note

    lines = [n for j in judges if (n := retirement_note(j.id, j.spec.model)) is not None]
    for line in lines:
        (echo or Console(stderr=True, soft_wrap=True)).print(f"warning: {line}", highlight=False, markup=False)
    return lines


def report_calls(summary: CallSummary, *, allow_failures: bool, echo: Console | None = None,
                 parts: Recorder | None = None) -> None:
    """Print failed calls and parse failures per judge on stderr; when a judge produced no usable
    verdict, end with one line naming it and its first error and exit 1 (``typer.Exit``), unless
    ``allow_failures``. With ``parts`` (the recording's per-part summaries, e.g. per arm), the parts
    with a failure are printed too, and a judge with no usable verdict in one part fails the same way."""
    echo = echo or Console(stderr=True, soft_wrap=True)
    if not summary.judges:
        return
    echo.print("judge calls:", highlight=False)
    for j in summary.judges:
        echo.print(f"  {j.line()}", highlight=False, markup=False)
    for s in parts.parts if parts is not None else ():
        for j in s.judges:
            if j.failed_calls or j.parse_failures:
                echo.print(f"  {j.line()}", highlight=False, markup=False)
    line = summary.failure_line() or (parts.part_failure_line() if parts is not None else None)
    failed(line, allow_failures=allow_failures, echo=echo)


def failed(line: str | None, *, allow_failures: bool, echo: Console) -> None:
    """A failure ``line`` (None: nothing failed) ends the command with exit 1 (``typer.Exit``), or is a
    warning with ``allow_failures``."""
    if line is None:
        return
    if allow_failures:
        echo.print(f"warning: {line}; kept going (--allow-failures)", highlight=False, markup=False)
        return
    echo.print(f"error: {line}", highlight=False, markup=False)
    raise typer.Exit(1)


@contextmanager
def checked_calls(allow_failures: bool, *, echo: Console | None = None) -> Iterator[Recorder]:
    """Around a command's work: every judge call made inside is summarised when it ends (see
    ``report_calls``); outputs written inside the block are kept whatever the outcome."""
    with recording() as rec:
        yield rec
    report_calls(rec.summary(), allow_failures=allow_failures, echo=echo, parts=rec)


def run_context(*, api_base: str | None = None, timeout: float | None = None, retries: int | None = None,
                rpm: float | None = None, backend: str | None = None, address: str | None = None,
                sink: BatchSink | None = None) -> RunContext:
    """The ``RunContext`` of a command's call options (``ApiBaseOpt``, ``TimeoutOpt``, ``RetriesOpt``, ``RpmOpt``,
    ``BackendOpt``, ``RayAddressOpt``), checked against ``validate.OPTION_RULES`` before anything runs; the
    command passes it to every judge it builds and every run it makes."""
    from judgeaudit.validate import check_options

    check_options(timeout=timeout, retries=retries, rpm=rpm)
    return RunContext.of(timeout=timeout, retries=retries, rpm=rpm, api_base=api_base, backend=backend,
                         address=address, sink=sink)


def calls_checked(command: Callable[..., object]) -> Callable[..., object]:
    """Decorate a typer command that calls judges and has an ``allow_failures`` option: its calls are
    summarised when it ends and it exits 1 when a judge produced no usable verdict (``checked_calls``).
    The command takes a keyword ``context``: the ``RunContext`` of its ``backend``/``ray_address`` options
    (``BackendOpt``, ``RayAddressOpt``), its ``call_timeout``/``call_retries``/``call_rpm`` options
    (``TimeoutOpt``, …; checked before anything runs), its ``api_base`` and its ``batch``/``batch_out`` options
    (``BatchOpt``, ``BatchOutOpt``: the missing calls go to a provider's batch file instead), which it passes to
    every judge it builds and every run it makes (``context`` is not a command-line option). Its
    ``mlflow``/``mlflow_experiment`` options (``tracking.MlflowOpt``) log the outputs to MLflow when it ends."""

    name = f"{command.__module__.rsplit('.', 1)[-1]} {command.__name__.removesuffix('_cmd')}"

    @functools.wraps(command)
    def wrapper(*args: object, **kwargs: object) -> object:
        with command_calls(name, kwargs) as context:
            return command(*args, context=context, **kwargs)

    sig = inspect.signature(command, eval_str=True)   # what typer reads: the annotations themselves
    wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[p for p in sig.parameters.values() if p.name != "context"])
    return wrapper


@contextmanager
def command_calls(name: str, options: Mapping[str, Any]) -> Iterator[RunContext]:
    """What ``calls_checked`` puts around the command ``name`` (``validity run``), given its options by their
    parameter names (``allow_failures``, ``backend``, ``ray_address``, ``api_base``, ``call_timeout``,
    ``call_retries``, ``call_rpm``, ``batch``, ``batch_out``, ``mlflow``, ``mlflow_experiment``, ``out``; absent
    ones are off): ``judgeaudit run`` puts it around an experiment file's run. It yields the command's
    ``RunContext``, built once here. When the block ends without an error, ``--mlflow`` logs the outputs in
    ``out`` (nothing is logged when ``--batch`` deferred the calls)."""
    from judgeaudit.validate import check_options

    tracking.check(options)
    api_base, timeout = options.get("api_base"), options.get("call_timeout")
    retries, rpm = options.get("call_retries"), options.get("call_rpm")
    check_options(timeout=timeout, retries=retries, rpm=rpm)
    with batching(options.get("batch"), options.get("batch_out")) as sink:
        context = RunContext.of(api_base=api_base, timeout=timeout, retries=retries, rpm=rpm,
                                backend=options.get("backend"), address=options.get("ray_address"), sink=sink)
        with checked_calls(bool(options.get("allow_failures"))):
            yield context
            tracking.log(name, options)   # --mlflow: the outputs just written
