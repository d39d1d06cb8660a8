"""A run's configuration: what a command was told about how to make its judge calls, in one immutable object.

A command builds one ``RunContext`` at its edge (``commands.common.command_calls``, from its ``--timeout``,
``--retries``, ``--rpm``, ``--api-base``, ``--backend``/``--ray-address`` and ``--batch`` options) and passes it
down to the code that makes calls (``runtime.executor.arun``/``run``/``judge_all``: the call defaults, the
backend, the batch sink) and builds models (the ``api_base`` of every judge, responder and NLI model built without
one of its own). Nothing reads it from an ambient scope: a function that calls judges takes ``context=`` and
passes it on; without one, ``RunContext()`` is a run with the defaults (this process, no batch file).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from judgeaudit.runtime import backends
from judgeaudit.runtime.batch import BatchSink
from judgeaudit.runtime.calls import RetryPolicy


@dataclass(frozen=True)
class CallDefaults:
    """The call options a command was given (``--timeout``, ``--retries``, ``--rpm``), for the runs it makes
    that were not given their own policy or rate (None: the defaults)."""

    timeout: float | None = None
    retries: int | None = None
    rpm: float | None = None

    def policy(self) -> RetryPolicy:
        base = RetryPolicy()
        return RetryPolicy(max_retries=base.max_retries if self.retries is None else self.retries,
                           base_delay=base.base_delay, max_delay=base.max_delay,
                           timeout=base.timeout if self.timeout is None else self.timeout)


@dataclass(frozen=True)
class RunContext:
    """One command's run configuration.

    Attributes:
        calls: the call defaults (``--timeout``, ``--retries``, ``--rpm``).
        api_base: the server every model built without an ``api_base`` of its own calls (``--api-base``).
        backend: where the calls run (``runtime.backends``; built once, so a bad name or an unreachable
            cluster fails before anything runs).
        sink: where calls go instead of being made (``--batch``: ``runtime.batch``), None: calls are made.
    """

    calls: CallDefaults = field(default_factory=CallDefaults)
    api_base: str | None = None
    backend: backends.Backend = field(default_factory=backends.make)
    sink: BatchSink | None = None

    @classmethod
    def of(cls, *, timeout: float | None = None, retries: int | None = None, rpm: float | None = None,
           api_base: str | None = None, backend: str | None = None, address: str | None = None,
           sink: BatchSink | None = None) -> RunContext:
        """The context of a command's options (``backend``/``address``: ``backends.make``, which refuses an
        unknown name or an address for a backend that takes none)."""
        return cls(calls=CallDefaults(timeout=timeout, retries=retries, rpm=rpm), api_base=api_base,
                   backend=backends.make(backend, address), sink=sink)


DEFAULT = RunContext()
"""The context of a call made with none: the default call options, in this process, no batch file."""


def of(context: RunContext | None) -> RunContext:
    """``context``, or ``DEFAULT`` for None (a Python caller that gave none)."""
    return DEFAULT if context is None else context
