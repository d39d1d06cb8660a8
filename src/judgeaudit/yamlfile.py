"""YAML files a user writes (experiments, templates, ledgers, gate policies): read with their node tree,
so that an error names the line of the field it is about."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from judgeaudit.errors import InputError


def load_yaml(text: str, path: str | Path) -> tuple[yaml.Node | None, Any]:
    """``(node tree, data)`` of YAML ``text``; malformed YAML is an ``InputError`` naming ``path`` and the
    line of the problem."""
    try:
        return yaml.compose(text), yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(f"malformed YAML ({getattr(e, 'problem', None) or e})", path=path,
                         line=mark.line + 1 if mark else None) from None


def line_of(node: yaml.Node | None, loc: tuple[Any, ...], *, key_line: bool = False) -> int | None:
    """1-based line of the deepest node reached along ``loc`` (mapping keys and sequence indices); with
    ``key_line``, the line of the last mapping key reached rather than of its value."""
    if node is None:
        return None
    line = node.start_mark.line + 1
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if getattr(k, "value", None) == key), None)
            if pair is None:
                break
            node, line = pair[1], (pair[0] if key_line else pair[1]).start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            break
    return line
