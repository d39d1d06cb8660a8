"""``judgeaudit requests export``: the exact requests an analysis sends, for a user's own harness.

The requests are those the analysis's own run sends, built by the same builders (validity:
``probes.design.graded_requests`` plus the regrade sample; cap: ``analyses.cap_design.pairwise_requests``,
both orders of every pair; world: ``world.requests.build_requests``, every item × arm × vote). Written to
``OUT/requests.jsonl`` (``interop.export``), ``OUT/inspect_task.py`` (an Inspect AI task over them) and
``OUT/promptfoo_tests.yaml`` with ``OUT/promptfooconfig.yaml`` (promptfoo test cases). The verdicts come
back with ``--judge replay:FILE`` (or ``replay:inspect:LOG``) on the analysis's own ``run``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from judgeaudit.commands.verbs import HELP
from judgeaudit.commands.outputs import out_option
from judgeaudit.errors import InputError
from judgeaudit.records import JudgeRequest

app = typer.Typer(help=HELP["requests"],
                  no_args_is_help=True)
from judgeaudit.analyses.validity.options import DEFAULTS as VALIDITY_DEFAULTS  # noqa: E402

console = Console(stderr=True)
ANALYSES = ("validity", "cap", "world")
FILES = ("requests.jsonl", "inspect_task.py", "promptfoo_tests.yaml", "promptfooconfig.yaml")


def validity_requests(probes: str = VALIDITY_DEFAULTS["probes"], *,
                      regrade: int = VALIDITY_DEFAULTS["regrade"]) -> list[JudgeRequest]:
    """What ``validity run --probes PROBES --regrade N`` sends (``probes.design.validity_requests``)."""
    from judgeaudit.analyses.validity.options import OPTIONS
    from judgeaudit.probes.design import validity_requests as build
    from judgeaudit.probes.io import BUNDLED, bundled_probes_path, read_probes
    from judgeaudit.records import probes_frame

    OPTIONS.check(regrade=regrade)
    path = bundled_probes_path() if probes == BUNDLED else Path(probes)
    return build(probes_frame(read_probes(path)), regrade)


def cap_requests(set_specs: Sequence[str]) -> list[JudgeRequest]:
    """What ``cap run --set … --judge J`` sends a live judge: every pair in both orders."""
    import pandas as pd

    from judgeaudit.analyses.cap_design import pairwise_requests
    from judgeaudit.commands.cap import load_cap_set

    if not set_specs:
        raise InputError("give at least one --set SPEC", field="set")
    frames = [load_cap_set(spec)[0] for spec in set_specs]
    return pairwise_requests(pd.concat(frames, ignore_index=True))


def world_requests(set_spec: str | None, arms: Sequence[str], *, form: str = "label", votes: int = 3,
                   max_items: int | None = None, seed: int = 0, top_k: int = 5, split: str = "all",
                   items: list | None = None) -> list[JudgeRequest]:
    """What ``world run --set … --arm … --form … --votes …`` sends (``items``: used instead of the set)."""
    from judgeaudit.commands.world import load_set, split_items
    from judgeaudit.world.arms import get_arm
    from judgeaudit.world.requests import build_requests
    from judgeaudit.world.run import context_for

    if not arms or len(set(arms)) != len(arms):
        raise InputError(f"arms must be given once each; got {list(arms)}", field="--arm")
    if votes < 1:
        raise InputError("must be at least 1", field="--votes")
    for a in arms:
        get_arm(a)
    if items is None:
        if not set_spec:
            raise InputError("give --set SPEC", field="--set")
        items, _ = load_set(set_spec, max_items)
    items, _ = split_items(items, split)
    if not items:
        raise InputError("the set has no items", field="--set")
    return build_requests(items, list(arms), context_for(items, seed, None, top_k), form=form, votes=votes)


def write_export(out: Path, requests: list[JudgeRequest], *, analysis: str, judge_spec: str | None = None,
                 template: str | None = None) -> Path:
    """Write the four files of an export into ``out``; returns ``out``. ``template`` (a built-in name or a
    file): the judge template that renders and reads the requests (else the judge's, else judgeaudit's)."""
    from judgeaudit.interop.export import export_rows, inspect_task_source, promptfoo_config, promptfoo_tests
    from judgeaudit.io import write_jsonl
    from judgeaudit.judges import make_judge
    from judgeaudit.judges.base import with_template
    from judgeaudit.judges.templates import get_template

    chosen = get_template(template) if template is not None else None
    judge = make_judge(judge_spec) if judge_spec else None
    if judge is not None and template is not None and judge.takes_template and judge.template is None:
        judge = with_template(judge, template)
    chosen = judge.template if judge is not None and judge.template is not None else chosen
    if chosen is not None and chosen.default_for is not None:
        chosen = None   # a built-in default renders what judgeaudit renders anyway
    rows = export_rows(requests, judge, chosen)   # renders every request first: a bad template fails here
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "requests.jsonl", rows)
    (out / "inspect_task.py").write_text(inspect_task_source(requests, analysis=analysis, template=chosen),
                                         encoding="utf-8")
    (out / "promptfoo_tests.yaml").write_text(block_yaml(promptfoo_tests(rows)), encoding="utf-8")
    header = ("# promptfoo config over the exported requests. Add your provider (the judge model under audit), e.g.\n"
              "# providers:\n"
              "#   - <provider>:<model>\n"
              "# then run\n"
              "#   promptfoo eval -c promptfooconfig.yaml --no-cache -o results.json\n"
              "# (--no-cache: requests that differ only in their epoch are separate calls) and bring the\n"
              "# verdicts back with --judge replay:promptfoo:results.json\n")
    (out / "promptfooconfig.yaml").write_text(header + block_yaml(promptfoo_config(analysis=analysis)),
                                              encoding="utf-8")
    return out


_WIDTH = 100_000   # no line is folded: a prompt is written as it is
#: Characters libyaml's emitter writes otherwise than PyYAML's: the Unicode line breaks (NEL, LS, PS), lone
#: surrogates and every character outside the Basic Multilingual Plane.
_LIBYAML_DIFFERS = re.compile("[\x85\u2028\u2029\ud800-\udfff\U00010000-\U0010ffff]")
#: Characters a quoted scalar may write as an escape (up to 10 columns each) or a doubled quote, and the
#: columns a string so written stays within (room left for its key and indent).
_LINE = _WIDTH - 1_000
_ESCAPED = re.compile("[^\x20-\x7e\xa0-\ud7ff\ue000-\ufffd]|[\"'\\\\\ufeff]")
#: Mapping keys both write alike: printable ASCII, short of the length that makes a key complex.
_KEY = re.compile("[\x20-\x7e]{1,99}")


def block_yaml(data: dict | list) -> str:
    """``data`` as block YAML, multi-line strings as literal blocks (the rendered prompts), unfolded. The text
    is PyYAML's own emitter's; libyaml's emitter, many times faster, writes it when every string in ``data``
    is one it writes the same (``_libyaml_writes_alike``), else PyYAML's own does."""
    import yaml

    dumper = _block_dumper(yaml.CSafeDumper if _libyaml_writes_alike(data) else yaml.SafeDumper)
    return yaml.dump(data, Dumper=dumper, allow_unicode=True, sort_keys=False, width=_WIDTH)


def _libyaml_writes_alike(data: object) -> bool:
    """Whether libyaml's emitter writes ``data`` byte for byte as PyYAML's does (where they part: a document
    that is one scalar; a mapping key that is empty, long or not printable ASCII; the characters of
    ``_LIBYAML_DIFFERS``; a literal block that keeps its final line breaks, after which libyaml ends the
    document with ``...``; a line long enough to be folded)."""
    import yaml

    if not getattr(yaml, "__with_libyaml__", False) or not isinstance(data, dict | list):
        return False
    stack: list[object] = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if not all(isinstance(k, str) and _KEY.fullmatch(k) for k in x):
                return False
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, str):
            if (_LIBYAML_DIFFERS.search(x) or x.endswith("\n") and (len(x) == 1 or x[-2] == "\n")
                    or 10 * len(x) > _LINE and len(x) + 9 * len(_ESCAPED.findall(x)) > _LINE):
                return False
        elif not (x is None or isinstance(x, bool | int | float)):
            return False
    return True


def _block_dumper(base: type) -> type:
    import yaml

    class BlockDumper(base):
        """Multi-line strings (the rendered prompts) as literal blocks."""

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)

    BlockDumper.add_representer(str, text)
    return BlockDumper


@app.command("export")
def export_cmd(
    analysis: Annotated[str, typer.Option("--analysis", help="validity | cap | world")],
    out: Annotated[Path, out_option("--out", what="folder", help="output folder")],
    judge: Annotated[str | None, typer.Option(
        "--judge", help="a judge spec: each row then carries the text that judge's call key hashes and the key")] = None,
    template: Annotated[str | None, typer.Option(
        "--template", help="a judge template (built-in name or file) that renders the requests and reads the "
        "replies (default: the --judge's, else judgeaudit's own)")] = None,
    probes: Annotated[str, typer.Option("--probes", help="validity: probe JSONL, or 'bundled'")] = "bundled",
    regrade: Annotated[int, typer.Option("--regrade", help="validity: requests re-graded (as validity run)")] = 48,
    set_: Annotated[list[str] | None, typer.Option("--set", help="cap: a set spec (repeat); world: the set")] = None,
    arm: Annotated[list[str] | None, typer.Option("--arm", help="world: arm (repeat; default blind, informed)")] = None,
    form: Annotated[str, typer.Option("--form", help="world: label | sentences | typed | score | defects")] = "label",
    votes: Annotated[int, typer.Option("--votes", help="world: samples per request")] = 3,
    max_items: Annotated[int | None, typer.Option("--max-items", help="world: the first N items")] = None,
    seed: Annotated[int, typer.Option("--seed", help="world: the seed of the placebo and routed arms")] = 0,
    top_k: Annotated[int, typer.Option("--top-k", help="world: routed arm's sentences per claim")] = 5,
    split: Annotated[str, typer.Option("--split", help="world: all | report | dev")] = "all",
) -> None:
    """Write OUT/requests.jsonl, OUT/inspect_task.py, OUT/promptfoo_tests.yaml and OUT/promptfooconfig.yaml."""
    from judgeaudit.validate import output_dir

    if analysis not in ANALYSES:
        raise InputError(f"unknown analysis {analysis!r}; choose {', '.join(ANALYSES)}", field="--analysis")
    output_dir(out, writes=FILES, inputs=[None if probes == "bundled" else probes])
    if analysis == "validity":
        requests = validity_requests(probes, regrade=regrade)
    elif analysis == "cap":
        requests = cap_requests(set_ or [])
    else:
        if set_ is not None and len(set_) > 1:
            raise InputError("world takes one --set", field="--set")
        requests = world_requests((set_ or [None])[0], arm or ["blind", "informed"], form=form, votes=votes,
                                  max_items=max_items, seed=seed, top_k=top_k, split=split)
    write_export(out, requests, analysis=analysis, judge_spec=judge, template=template)
    console.print(f"{len(requests)} {analysis} requests → {out}/requests.jsonl, {out}/inspect_task.py, "
                  f"{out}/promptfoo_tests.yaml (answer them, then run {analysis} with --judge replay:FILE)")
