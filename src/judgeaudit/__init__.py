"""judgeaudit: audit LLM-as-a-judge instruments for validity, not just reliability.

The public names below are re-exported lazily, so ``import judgeaudit`` stays fast.

Layers, low to high (a module imports only from its own layer or the layers below it, never from a
higher one, not even inside a function; ``tests/test_layers.py`` checks this and that no imports form
a cycle):

1. errors, records, io, yamlfile, families, stats, runinfo, runfolder, options, validate, registry, consent,
   _startup, specs — the typed rows, file readers, the model-family table, the shared estimators, the run-folder
   records, the declared options and their rules, the one registry type, the command line's consent to run
   code a file names and the one reader of a spec string's ``?key=value`` options;
2. datasets, checkers — the public sets' adapters and the programs that label outputs;
3. judges — the instruments and their elicitation;
4. runtime — the call store and the executors;
5. probes — probe sets and the CAP testbed, built by calling a generator through the runtime;
6. analyses — pure functions from tables to result objects (validity, cap, validation_power, world);
7. world, loop, structural, interop — world runs, the acting loop, the structural judge, adapters to
   other tools;
8. card, ledger, gate — the per-judge card, the prediction ledger and the CI gate, read from the
   analyses' results;
9. report — the HTML, Markdown and JSON pages;
10. commands, demo, experiment — the command edge: options, orchestration (the default runs a card
    lacks, ``commands.default_runs``), the demo;
11. cli — the command line.

Where a lower layer must reach something defined above it (a judge backend, an executor backend, a verdict
form, a replay format, the card's missing runs), it offers a ``judgeaudit.registry.Registry`` that the higher
layer fills. The program is composed from the top: this package declares judgeaudit's own plug-ins
(``ENTRY_POINTS`` below) with a loader of its own, so the import of a plug-in runs here, never in the lower
layer, and only for the name looked up; the command line imports its commands, which register themselves.
Other packages' plug-ins are the installed entry points of each registry's group.
"""

from __future__ import annotations

from judgeaudit import _startup  # noqa: F401 - first: Ctrl-C while the command line loads is one line

from importlib import import_module  # noqa: E402
from typing import Any

from judgeaudit.errors import InputError
from judgeaudit.records import Item, JudgeRequest, PairwiseItem, Probe, Verdict

__version__ = "0.1.0"

ENTRY_POINTS: dict[str, dict[str, str]] = {
    "judgeaudit.judges": {**{m: f"judgeaudit.judges.{m}" for m in
                             ("api", "composite", "hf", "local", "python", "reference", "replay")},
                          "structural": "judgeaudit.structural.judge"},
    "judgeaudit.backends": {"ray": "judgeaudit.runtime.raybackend"},
    "judgeaudit.replay_formats": {"inspect": "judgeaudit.interop.inspect", "promptfoo": "judgeaudit.interop.promptfoo"},
    "judgeaudit.template_families": {"world": "judgeaudit.world.forms"},
    "judgeaudit.card_missing": {"default_runs": "judgeaudit.commands.card_missing"},
}
"""judgeaudit's own plug-ins by entry-point group, as ``pyproject.toml``'s ``[project.entry-points]`` declares
them (a test keeps the two equal). Each is declared to ``judgeaudit.registry`` with ``_load_plugin`` below, so a
lower layer's registry finds it on the first lookup of its name without importing the higher package itself,
installed metadata or not."""


def _load_plugin(value: str) -> object:
    """Import one of judgeaudit's own plug-ins (``module[:attr]``): what a registry calls, through the
    declaration below, on the first lookup of the plug-in's name."""
    module, _, attr = value.partition(":")
    obj: object = import_module(module)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj


def _declare_plugins() -> None:
    from functools import partial

    from judgeaudit import registry

    for group, table in ENTRY_POINTS.items():
        for name, value in table.items():
            registry.declare(group, name, partial(_load_plugin, value))


_declare_plugins()

_LAZY = {
    "make_judge": "judgeaudit.judges.base",
    "JudgeSpec": "judgeaudit.judges.base",
    "CallStore": "judgeaudit.runtime.store",
    "run": "judgeaudit.runtime.executor",
    "read_probes": "judgeaudit.probes.io",
    "graded_requests": "judgeaudit.probes.design",
    "validity_profile": "judgeaudit.analyses.validity",
    "audit_validation_power": "judgeaudit.analyses.validation_power",
    "cap_profile": "judgeaudit.analyses.cap",
    "direction_agreement": "judgeaudit.analyses.agreement",
    "load_set": "judgeaudit.datasets.registry",
    "calibrate": "judgeaudit.analyses.calibrate",
    "load_policy": "judgeaudit.gate",
    "evaluate_policy": "judgeaudit.gate",
}

__all__ = ["InputError", "Item", "JudgeRequest", "PairwiseItem", "Probe", "Verdict", "__version__", "card", *_LAZY]


def __getattr__(name: str) -> Any:
    if name == "card":   # the package judgeaudit.card, callable: judgeaudit.card(judge, from_dirs, out, ...)
        return import_module("judgeaudit.card")
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'judgeaudit' has no attribute {name!r}")
