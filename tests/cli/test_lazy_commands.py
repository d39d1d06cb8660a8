"""The command line loads only the command named on it: ``judgeaudit gate …`` does not import the validation-power
analysis, the command line itself starts without pandas, numpy, aiohttp or litellm (each command imports what it
uses), and the top-level help still lists every verb group."""

from __future__ import annotations

import subprocess
import sys

from judgeaudit import cli


def test_a_command_loads_only_its_own_module() -> None:
    code = ("import sys; sys.argv = ['judgeaudit', 'gate', '--help']\n"
            "from judgeaudit.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('judgeaudit.commands.')))\n"
            "print('judgeaudit.analyses.validation_power' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    *_, loaded, vp = r.stdout.strip().splitlines()
    assert "judgeaudit.commands.gate" in loaded
    for other in ("judgeaudit.commands.vp", "judgeaudit.commands.validity", "judgeaudit.commands.world",
                  "judgeaudit.commands.loop", "judgeaudit.commands.cap"):
        assert other not in loaded, loaded
    assert vp == "False"


def test_the_command_line_starts_without_the_heavy_libraries() -> None:
    code = ("import sys\n"
            "import judgeaudit.cli, judgeaudit.judges, judgeaudit.runtime.failures\n"
            "print(sorted(m for m in ('pandas', 'numpy', 'pyarrow', 'scipy', 'aiohttp', 'litellm') if m in sys.modules))\n"
            "judgeaudit.make_judge('reference:constant')\n"     # a backend is still found on its first lookup
            "print('judgeaudit.judges.reference' in sys.modules, 'judgeaudit.judges.api' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[]", "True False"]


def test_the_top_level_help_lists_every_group(cli_main) -> None:
    r = cli_main("--help")
    assert r.returncode == 0
    for name in (*cli._GROUPS, *cli._COMMANDS, "judge", "run", "demo", "judges", "store"):
        assert f" {name} " in r.stdout, name


def test_a_usage_error_line_loads_no_table_or_page_library() -> None:
    code = ("import sys; sys.argv = ['judgeaudit', '--plotly', 'cdn', 'judge', '--nosuch']\n"
            "from judgeaudit.cli import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n    print(e.code)\n"
            "from judgeaudit.report.pagemode import plotly_mode\n"
            "print(plotly_mode(), sorted(m for m in ('pandas', 'numpy', 'jinja2', 'aiohttp') if m in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "No such option: --nosuch" in r.stderr
    assert r.stdout.splitlines()[-2:] == ["2", "cdn []"]


def test_the_top_level_help_lists_the_groups_without_importing_them() -> None:
    code = ("import sys; sys.argv = ['judgeaudit', '--help']\n"
            "from judgeaudit.cli import main\n"
            "before = set(sys.modules)\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in set(sys.modules) - before if m.startswith('judgeaudit.commands.')))\n"
            "print(sorted(m for m in ('pandas', 'numpy', 'scipy', 'aiohttp') if m in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    *_, loaded, heavy = r.stdout.strip().splitlines()
    assert "Commands" in r.stdout and all(f" {name} " in r.stdout for name in cli._GROUPS)
    for module in cli._GROUPS.values():
        assert module not in loaded, loaded
    assert heavy == "[]"


def test_a_group_shows_the_help_the_listing_shows() -> None:
    from judgeaudit.commands.verbs import HELP

    for name in cli._GROUPS:
        assert cli._load_command(name).help == HELP[name], name


def test_every_group_runs_its_subcommands(cli_main) -> None:
    r = cli_main("batch", "--help")
    assert r.returncode == 0 and "ingest" in r.stdout
    r = cli_main("templates", "list")
    assert r.returncode == 0 and "mt-bench" in r.stdout.lower()
