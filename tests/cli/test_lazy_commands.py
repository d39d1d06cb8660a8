"""The command line loads only the command named on it: ``judgeaudit gate …`` does not import the validation-power
analysis, the command line itself starts without pandas, numpy, aiohttp or litellm (each command imports what it
uses), and the top-level help still lists every verb group."""

from __future__ import annotations

import subprocess
import sys

from judgeaudit import cli
from judgeaudit.commands.verbs import GROUPS

CALL_MAIN = ("from judgeaudit.cli import main\nbefore = set(sys.modules)\n"
             "try:\n    main()\nexcept SystemExit as e:\n    print(e.code)\n")
"""Runs the command line on ``sys.argv`` and prints its exit code; ``before``: the modules loaded once the command
line was imported."""


def _fresh(argv: list[str] | None, code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (after the command line on ``argv``, when given): what a user's process
    imports, untouched by this test process."""
    head = f"import sys; sys.argv = {['judgeaudit', *argv]!r}\n{CALL_MAIN}" if argv else ""
    return subprocess.run([sys.executable, "-c", head + code], capture_output=True, text=True, timeout=120)


def test_a_command_loads_only_its_own_module() -> None:
    r = _fresh(["gate", "--help"], "print(sorted(m for m in sys.modules if m.startswith('judgeaudit.commands.')))\n"
                                   "print('judgeaudit.analyses.validation_power' in sys.modules)\n")
    assert r.returncode == 0, r.stderr
    *_, loaded, vp = r.stdout.strip().splitlines()
    assert "judgeaudit.commands.gate" in loaded
    for other in ("judgeaudit.commands.vp", "judgeaudit.commands.validity", "judgeaudit.commands.world",
                  "judgeaudit.commands.loop", "judgeaudit.commands.cap"):
        assert other not in loaded, loaded
    assert vp == "False"


def test_the_command_line_starts_without_the_heavy_libraries() -> None:
    r = _fresh(None, "import sys\n"
                     "import judgeaudit.cli, judgeaudit.judges, judgeaudit.runtime.failures\n"
                     "print(sorted(m for m in ('pandas', 'numpy', 'pyarrow', 'scipy', 'aiohttp', 'litellm')"
                     " if m in sys.modules))\n"
                     "judgeaudit.make_judge('reference:constant')\n"     # a backend is still found on its first lookup
                     "print('judgeaudit.judges.reference' in sys.modules, 'judgeaudit.judges.api' in sys.modules)\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[]", "True False"]


def test_the_top_level_help_lists_every_group(cli_main) -> None:
    r = cli_main("--help")
    assert r.returncode == 0
    for name in (*GROUPS, *cli._COMMANDS, "judge", "run", "demo", "judges", "store"):
        assert f" {name} " in r.stdout, name


def test_a_usage_error_line_loads_no_table_or_page_library() -> None:
    r = _fresh(["--plotly", "cdn", "judge", "--nosuch"],
               "from judgeaudit.report.pagemode import plotly_mode\n"
               "print(plotly_mode(), sorted(m for m in ('pandas', 'numpy', 'jinja2', 'aiohttp')"
               " if m in sys.modules))\n")
    assert "No such option: --nosuch" in r.stderr
    assert r.stdout.splitlines()[-2:] == ["2", "cdn []"]


def test_the_top_level_help_lists_the_groups_without_importing_them() -> None:
    r = _fresh(["--help"],
               "print(sorted(m for m in set(sys.modules) - before if m.startswith('judgeaudit.commands.')))\n"
               "print(sorted(m for m in ('pandas', 'numpy', 'scipy', 'aiohttp') if m in sys.modules))\n")
    assert r.returncode == 0, r.stderr
    *_, loaded, heavy = r.stdout.strip().splitlines()
    assert "Commands" in r.stdout and all(f" {name} " in r.stdout for name in GROUPS)
    for module in GROUPS.values():
        assert module not in loaded, loaded
    assert heavy == "[]"


def test_a_group_shows_the_help_the_listing_shows() -> None:
    from judgeaudit.commands.verbs import HELP

    for name in GROUPS:
        assert cli._load_command(name).help == HELP[name], name


def test_every_group_runs_its_subcommands(cli_main) -> None:
    r = cli_main("batch", "--help")
    assert r.returncode == 0 and "ingest" in r.stdout
    r = cli_main("templates", "list")
    assert r.returncode == 0 and "mt-bench" in r.stdout.lower()
