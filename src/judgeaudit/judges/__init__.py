"""Judges (instruments) and their registry. Each backend module (``api``, ``local``, ``replay``, ...) registers
its backends when imported; backends defined above this layer (``structural:``) or in other packages fill the
same registry (``judges.base.BACKENDS``, a ``judgeaudit.registry.Registry`` of the entry-point group
``judgeaudit.judges``): judgeaudit's own are declared by the top package and loaded on the first lookup of their
name, so importing this package loads no backend (nor aiohttp, pandas or a model runtime)."""

from judgeaudit.judges.base import Judge, JudgeSpec, make_judge, register, registered

__all__ = ["Judge", "JudgeSpec", "make_judge", "register", "registered"]
