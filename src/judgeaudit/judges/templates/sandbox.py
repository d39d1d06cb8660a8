"""The bounded Jinja2 sandbox every judge template is rendered in.

A template is data written by someone else; rendering it must neither run code nor stall a run. The
environment here is Jinja2's ``ImmutableSandboxedEnvironment`` (no attribute that starts with ``_``, no
internal attribute of functions, frames or generators, no ``str.format`` route to them, no mutation
of lists and dicts) with:

* no globals but a bounded ``range``: no ``cycler``, ``lipsum``, ``joiner``, ``namespace`` or ``dict``
  (the request's fields are a template's only context), no loader (``include``, ``import`` and
  ``extends`` find nothing);
* a work budget per render (``MAX_WORK``): every loop iteration, call and filter spends one unit;
* a budget of what one render builds (``MAX_BUILT`` characters): every piece of output, also inside a
  ``set`` block or a macro, and every value a filter, call or operator returns;
* an output budget (``MAX_OUTPUT`` characters): the rendered text and every string, list or number a
  template builds on the way (``*``, ``**``, ``+``, ``%``, ``~``, filters, method calls) stay under
  it, and a number a template passes to a call or a filter (a width, a count) is at most that size,
  so that no single step allocates past it before it is checked;
* no constant folding at compile time (every expression is evaluated under the budgets).

A template that goes over a budget, or that reaches for what the sandbox refuses, raises
``TemplateRefused`` (a ``jinja2.sandbox.SecurityError``).

Why a ``ContextVar`` (``_BUDGET``, the budget of the render in progress): it is no configuration but per-render
mutable state that Jinja2 calls back into (the sandbox's ``call``, ``getattr`` and filter hooks, with no argument
of ours), for the one render running in this thread or task.
"""

from __future__ import annotations

import contextvars
import math
import string
from collections.abc import Iterable, Iterator
from functools import lru_cache, wraps
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

MAX_OUTPUT = 1_000_000
"""Characters a rendered prompt (and any string or list built on the way) may hold."""
MAX_WORK = 20_000
"""Loop iterations, calls and filter applications one render may spend."""
MAX_BUILT = 10 * MAX_OUTPUT
"""Characters (and list items) one render may build in all: every piece of output, also inside a
``{% set %}`` block, a macro or a filter block, and every value a filter, call or operator returns."""
MAX_INT_BITS = 4096
"""The largest whole number a template may compute, in bits."""


class TemplateRefused(SecurityError):
    """A template that reaches for what the sandbox refuses or that goes over a render budget."""


class _Budget:
    __slots__ = ("left", "built")

    def __init__(self) -> None:
        self.left = MAX_WORK
        self.built = 0

    def spend(self, what: str) -> None:
        self.left -= 1
        if self.left < 0:
            raise TemplateRefused(f"the template does more than {MAX_WORK:,} loop iterations, calls and filters "
                                  f"in one render ({what})")

    def build(self, size: int, what: str) -> None:
        self.built += size
        if self.built > MAX_BUILT:
            raise TemplateRefused(f"the template builds more than {MAX_BUILT:,} characters in one render ({what})")


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("judgeaudit_template_budget", default=None)


def _spend(what: str) -> None:
    _budget(what).spend(what)


def _emitted(value: Any) -> Any:
    """A piece of output (anywhere: also inside a ``set`` block or a macro), counted in the built budget."""
    _budget("output").build(len(value) if isinstance(value, str) else 16, "output")
    return value


def _budget(what: str) -> _Budget:
    budget = _BUDGET.get()
    if budget is None:   # evaluated outside ``render`` (never: folding is off); bound it all the same
        raise TemplateRefused(f"{what} is evaluated outside a bounded render")
    return budget


def _size(value: Any) -> int:
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset, range)):
        return len(value)
    return 0


def _check_value(value: Any, what: str) -> Any:
    _budget(what).build(_size(value), what)
    if _size(value) > MAX_OUTPUT:
        raise TemplateRefused(f"{what} builds a value of {_size(value):,} items, over the limit of {MAX_OUTPUT:,}")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise TemplateRefused(f"{what} computes a number over {MAX_INT_BITS} bits")
    return value


def _check_args(args: Iterable[Any], what: str) -> None:
    for a in args:
        if isinstance(a, (int, float)) and not isinstance(a, bool) and math.isfinite(a) and abs(a) > MAX_OUTPUT:
            shown = f"{a:,}" if isinstance(a, int) else f"{a:g}"
            raise TemplateRefused(f"{what} is given the number {shown}, over the limit of {MAX_OUTPUT:,}")


def _too_wide(number: str | None) -> bool:
    return number is not None and number.isdigit() and int(number) > MAX_OUTPUT


def _check_format_string(text: str, what: str) -> None:
    """Refuse a ``%``/``{}`` format string whose width or precision is over the output limit."""
    if "%" in text:
        i = 0
        while (i := text.find("%", i)) >= 0:
            j = i + 1
            while j < len(text) and text[j] in "#0- +()abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_":
                if text[j] in "diouxXeEfFgGcrsa%":
                    break
                j += 1
            k = j
            while k < len(text) and (text[k].isdigit() or text[k] == "."):
                k += 1
            if any(_too_wide(part) for part in text[j:k].split(".")):
                raise TemplateRefused(f"{what}: a format width over the limit of {MAX_OUTPUT:,}")
            i = max(k, i + 1)
    if "{" in text:
        try:
            fields = list(string.Formatter().parse(text))
        except ValueError:
            return
        for _, _, spec, _ in fields:
            if spec and any(_too_wide(part) for part in "".join(c if c.isdigit() else " " for c in spec).split()):
                raise TemplateRefused(f"{what}: a format width over the limit of {MAX_OUTPUT:,}")


def _grows_past(value: Any, name: str, args: tuple[Any, ...]) -> bool:
    """Whether ``replace``/``join`` on ``value`` with ``args`` would build more than the output limit."""
    if name == "replace" and isinstance(value, str) and len(args) >= 2 and all(isinstance(a, str) for a in args[:2]):
        old, new = args[0], args[1]
        times = value.count(old) if old else len(value) + 1
        return len(value) + times * len(new) > MAX_OUTPUT
    if name == "join" and isinstance(value, str) and args and hasattr(args[0], "__len__"):
        return len(value) * len(args[0]) > MAX_OUTPUT
    if name == "join" and args and isinstance(args[0], str) and hasattr(value, "__len__"):
        return len(args[0]) * len(value) > MAX_OUTPUT
    return False


def bounded_range(*args: int) -> range:
    """``range`` of at most ``MAX_WORK`` numbers."""
    _check_args(args, "range")
    r = range(*args)
    if len(r) > MAX_WORK:
        raise TemplateRefused(f"range of {len(r):,} numbers, over the limit of {MAX_WORK:,}")
    return r


def _loop_items(items: Any) -> Iterator[Any]:
    """The items of a ``for`` loop, each spending one unit of the render's work budget."""
    for item in items:
        _spend("a loop")
        yield item


def _bounded_filter(name: str, f: Any) -> Any:
    @wraps(f)
    def run(*args: Any, **kwargs: Any) -> Any:
        _spend(f"filter {name}")
        _check_args((*args, *kwargs.values()), f"filter {name}")
        values = [a for a in args if not isinstance(a, (jinja2.runtime.Context, jinja2.Environment,
                                                          jinja2.nodes.EvalContext))]
        if name == "format" and values and isinstance(values[0], str):
            _check_format_string(values[0], f"filter {name}")
        if values and _grows_past(values[0], name, tuple(values[1:])):
            raise TemplateRefused(f"filter {name} would build more than {MAX_OUTPUT:,} characters")
        return _check_value(f(*args, **kwargs), f"filter {name}")

    return run


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox with no globals but a bounded ``range`` and the budgets above."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self) -> None:
        super().__init__(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False,
                         optimized=False)
        self.globals.clear()
        self.globals["range"] = bounded_range
        self.filters = {name: _bounded_filter(name, f) for name, f in self.filters.items()}
        self.filters["_loop_items"] = _loop_items
        self.filters["_bounded_concat"] = lambda parts: _check_value("".join(str(p) for p in parts), "~")
        self.filters["_emitted"] = _emitted

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for loop in tree.find_all(nodes.For):
            loop.iter = nodes.Filter(loop.iter, "_loop_items", [], [], None, None, lineno=loop.lineno)
        for output in tree.find_all(nodes.Output):
            output.nodes = [nodes.Filter(n, "_emitted", [], [], None, None, lineno=n.lineno) for n in output.nodes]
        for concat in list(tree.find_all(nodes.Concat)):
            concat.nodes = [nodes.Filter(nodes.List(list(concat.nodes), lineno=concat.lineno), "_bounded_concat",
                                         [], [], None, None, lineno=concat.lineno)]
        return tree

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        what = f"operator {operator}"
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if _size(seq) and isinstance(n, int) and _size(seq) * n > MAX_OUTPUT:
                    raise TemplateRefused(f"{what} would build more than {MAX_OUTPUT:,} items")
        if operator == "**" and isinstance(left, (int, float)) and isinstance(right, (int, float)):
            if abs(left) > 1 and right > 0 and right * math.log2(abs(left)) > MAX_INT_BITS:
                raise TemplateRefused(f"{what} computes a number over {MAX_INT_BITS} bits")
        if operator == "%" and isinstance(left, str):
            _check_format_string(left, what)
            _check_args(right if isinstance(right, tuple) else (right,), what)
        return _check_value(super().call_binop(context, operator, left, right), what)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        name = getattr(__obj, "__name__", "a function")
        _spend(f"call {name}")
        _check_args((*args, *kwargs.values()), f"call {name}")
        owner = getattr(getattr(__obj, "__wrapped__", __obj), "__self__", None)   # str.format comes wrapped
        if owner is not None and _grows_past(owner, name, args):
            raise TemplateRefused(f"{name} would build more than {MAX_OUTPUT:,} characters")
        if owner is not None and isinstance(owner, str) and name in ("format", "format_map"):
            _check_format_string(owner, f"call {name}")
        return _check_value(super().call(__context, __obj, *args, **kwargs), f"call {name}")


@lru_cache(maxsize=1)
def environment() -> BoundedSandbox:
    return BoundedSandbox()


@lru_cache(maxsize=256)
def compiled(text: str) -> jinja2.Template:
    """``text`` compiled in the bounded sandbox (a syntax error is ``jinja2.TemplateSyntaxError``)."""
    return environment().from_string(text)


def render(text: str, context: dict[str, Any]) -> str:
    """``text`` rendered with ``context`` as its only variables, within the budgets above."""
    template = compiled(text)
    token = _BUDGET.set(_Budget())
    try:
        out: list[str] = []
        size = 0
        for chunk in template.generate(context):
            size += len(chunk)
            if size > MAX_OUTPUT:
                raise TemplateRefused(f"the rendered prompt is over the limit of {MAX_OUTPUT:,} characters")
            out.append(chunk)
        return "".join(out)
    except RecursionError:
        raise TemplateRefused("the template recurses too deeply") from None
    except MemoryError:
        raise TemplateRefused("the template runs out of memory") from None
    finally:
        _BUDGET.reset(token)
