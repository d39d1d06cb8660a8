"""Inspect AI's entry point into judgeaudit (``[project.entry-points.inspect_ai]`` in pyproject.toml).

Inspect imports it when a name in the ``judgeaudit/`` namespace is looked up, which registers the
``judgeaudit/judge`` scorer (:func:`judgeaudit.interop.inspect.judge_scorer`), so Inspect's own command line
finds it: ``inspect score LOG --scorer judgeaudit/judge -S judge=reference:length``.
"""

from judgeaudit.interop.inspect import _registered

judge = _registered()
