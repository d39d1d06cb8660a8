"""Judges (instruments) and their registry. Importing this package registers the backends defined here;
backends defined above this layer (``structural:``) or in other packages fill the same registry
(``judges.base.BACKENDS``, a ``judgeaudit.registry.Registry`` of the entry-point group ``judgeaudit.judges``):
judgeaudit's own are declared by the top package and loaded on the first lookup of their name."""

from judgeaudit.judges.base import Judge, JudgeSpec, make_judge, register, registered
from judgeaudit.judges import api, composite, hf, local, python, reference, replay  # noqa: F401,E402,I001

__all__ = ["Judge", "JudgeSpec", "make_judge", "register", "registered"]
