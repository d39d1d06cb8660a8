"""One error type for bad input, carrying the file, line and field it concerns.

The CLI catches ``InputError`` and prints ``str(err)`` without a traceback, exiting 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class InputError(ValueError):
    """Bad user input: a malformed file, a missing field, an unknown spec.

    Args:
        message: what is wrong, in one sentence.
        path: the file concerned, if any.
        line: 1-based line number in that file, if known.
        field: the field or option concerned, if any.
    """

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None,
                 field: str | None = None):
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.path:
            where = self.path + (f":{self.line}" if self.line else "")
        parts = [p for p in (where, f"field '{self.field}'" if self.field else "") if p]
        prefix = ": ".join(parts)
        return f"{prefix}: {self.message}" if prefix else self.message


def invalid(e: Any, what: str, *, path: str | Path | None = None, at: tuple[Any, ...] = ()) -> InputError:
    """The one error line of a file that fails its typed model: pydantic's ``ValidationError`` ``e`` read as its
    first error, named by its field (``at``: the field path above the model validated), after ``what``
    (e.g. "not a world result this judgeaudit reads")."""
    first = e.errors()[0]
    return InputError(f"{what}: {first['msg'].removeprefix('Value error, ')}", path=path,
                      field=".".join(map(str, (*at, *first["loc"]))) or None)


class TransientError(Exception):
    """A judge call failure worth retrying (rate limit, 5xx, timeout, broken body).

    ``retry_after`` is the server's Retry-After in seconds, when it sent one.
    """

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class AuthError(InputError):
    """A judge call the provider refused for its credentials (HTTP 401/403), or one that cannot be made since
    no key is in the environment for a named provider: never retried (every call would fail the same way);
    the run stops at once and the CLI prints the message, which names the variable to set (``field``), and
    exits 2."""
