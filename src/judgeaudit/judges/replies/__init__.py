"""Reading what judges write: the reply formats of graded, pass/fail and pairwise verdicts.

Judges state a verdict in many framings: ``Score: 7``, ``Rating: [[7]]`` (MT-Bench), ``[[A]]`` /
``[[B]]`` / ``[[C]]`` (MT-Bench pairwise, C a tie), ``[[A>>B]]`` … ``[[B>>A]]`` (Arena-Hard's five
labels), ``{"score": 7}``, ``Verdict: A``, a full-width colon, markdown bold, an explanation after
the verdict that mentions other numbers. Every framing found is a *statement*; a reply is read when
all its statements name one value on the scale, and refused (``ok=False`` with the reason) when a
statement is ambiguous (another scale, a range, a decimal on an integer scale) or two statements
disagree (two different bracketed ratings, both letters). A refused reply is counted as a parse
failure, never guessed.

The readers take the scale as a parameter (``judges.scale.Scale``: any integer range, or pass/fail).
Each named format (``FORMATS``) reads only its own framing; ``auto`` reads every framing of its form.

One module per form: ``graded``, ``passfail``, ``pairwise``, ``defects``; ``formats`` holds the named formats a
template declares; ``common`` what they share. Their public names are importable from here.
"""

from __future__ import annotations

from judgeaudit.judges.replies.common import ParseResult, check_json_path, json_objects, json_path
from judgeaudit.judges.replies.defects import defect_list, read_defects
from judgeaudit.judges.replies.formats import FORMATS, Reader, captured_value, other_choice, read_json_path, read_regex
from judgeaudit.judges.replies.graded import read_graded
from judgeaudit.judges.replies.pairwise import read_pairwise
from judgeaudit.judges.replies.passfail import read_pass_fail

__all__ = ["FORMATS", "ParseResult", "Reader", "captured_value", "check_json_path", "defect_list", "json_objects",
           "json_path", "other_choice", "read_defects", "read_graded", "read_json_path", "read_pairwise",
           "read_pass_fail", "read_regex"]
