"""Judges (instruments) and their registry. Importing this package registers every backend."""

from judgeaudit.judges.base import Judge, JudgeSpec, make_judge, register, registered
from judgeaudit.judges import api, composite, hf, local, python, reference, replay  # noqa: F401,E402,I001
import judgeaudit.structural.judge  # noqa: F401,E402 - registers structural:

__all__ = ["Judge", "JudgeSpec", "make_judge", "register", "registered"]
