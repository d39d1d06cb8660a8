"""Judges (instruments) and their registry. Importing this package registers every backend."""

from judgeaudit.judges.base import Judge, JudgeSpec, make_judge, register, registered

__all__ = ["Judge", "JudgeSpec", "make_judge", "register", "registered"]
