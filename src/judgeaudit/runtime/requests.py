"""Turning a user's JSONL of items into judge requests, with line-numbered errors."""

from __future__ import annotations

from pathlib import Path

from judgeaudit.errors import InputError
from judgeaudit.io import iter_jsonl
from judgeaudit.records import JudgeRequest

REQUIRED = {
    "graded": ("item_id", "text"),
    "pairwise": ("item_id", "prompt", "response_a", "response_b"),
    "defects": ("item_id", "text"),
    "label": ("item_id", "text"),
    "sentences": ("item_id", "text"),
}
# ``prompt``: the question a graded answer replies to; ``reference``: a reference answer (the reference-guided
# templates render both)
OPTIONAL = {
    "graded": ("evidence", "criterion", "prompt", "reference"),
    "pairwise": ("criterion", "reference"),
    "defects": ("evidence", "criterion"),
    "label": ("evidence", "criterion"),
    "sentences": ("evidence", "criterion"),
}
# optional lists of strings: the units a report labels, or the requirements (see JudgeRequest.units)
OPTIONAL_LISTS = {"defects": ("units",), "label": ("units",), "sentences": ("units",)}


def read_requests(path: str | Path, form: str) -> list[JudgeRequest]:
    """One request per line: ``graded``/``defects``/``label``/``sentences`` need ``item_id, text``
    (optional ``evidence``, ``criterion``; ``graded`` also ``prompt``, the question answered, and
    ``reference``; ``defects``/``label``/``sentences`` also ``units``, a list of strings); ``pairwise``
    needs ``item_id, prompt, response_a, response_b`` (optional ``criterion``, ``reference``)."""
    if form not in REQUIRED:
        raise InputError(f"unknown form {form!r}; choose {', '.join(REQUIRED)}", field="form")
    out: list[JudgeRequest] = []
    seen: dict[str, int] = {}
    for n, obj in iter_jsonl(path):
        for f in REQUIRED[form]:
            if f not in obj or obj[f] is None:
                raise InputError("required field is missing", path=path, line=n, field=f)
            v = obj[f]
            if f == "item_id":  # a string or a whole number; true/1.5/[...] are not ids
                if isinstance(v, bool) or not isinstance(v, (str, int)) or (isinstance(v, str) and not v.strip()):
                    raise InputError(f"must be a non-empty string or a whole number, got {v!r}", path=path,
                                     line=n, field=f)
            elif not isinstance(v, str) or not v.strip():
                raise InputError(f"must be a non-empty string, got {v!r}"[:120], path=path, line=n, field=f)
        for f in OPTIONAL[form]:
            if obj.get(f) is not None and not isinstance(obj[f], str):
                raise InputError("must be a string", path=path, line=n, field=f)
        for f in OPTIONAL_LISTS.get(form, ()):
            v = obj.get(f)
            if v is not None and (not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v)):
                raise InputError("must be a list of non-empty strings", path=path, line=n, field=f)
        item_id = str(obj["item_id"])
        if item_id in seen:
            raise InputError(f"duplicate item_id {item_id!r} (first on line {seen[item_id]})", path=path, line=n,
                             field="item_id")
        seen[item_id] = n
        fields = {f: obj.get(f) for f in REQUIRED[form][1:] + OPTIONAL[form] + OPTIONAL_LISTS.get(form, ())}
        out.append(JudgeRequest(request_id=item_id, form=form, **fields))
    if not out:
        raise InputError("file holds no items", path=path)
    return out
