"""Reading JSON that someone sent: API bodies, the upload page, JSON Lines rows, study files.

One reader, so every way in refuses the same bad text with the same message and names where
the problem is, never with a ``RecursionError`` or a traceback. Nesting is bounded
(``MAX_JSON_DEPTH``): no study file, item or answer needs more than a few levels, and deeper
values would overflow the recursive code that later walks them (copying, validating, saving).
"""

from __future__ import annotations

import json
from typing import Any

from annotation.errors import InputError

MAX_JSON_DEPTH = 64
NAMED_LEVELS = 3  # an error names at most this many levels (``items[3].provenance``)


class BadJSON(ValueError):
    """The text is not JSON we read; ``path`` is where inside the value (``""``: the whole)."""

    def __init__(self, message: str, path: str = ""):
        self.message, self.path = message, path
        super().__init__(message)


def read_json(text: str | bytes) -> Any:
    """The value of a JSON text, or ``BadJSON`` (bad syntax, bad encoding, nested too deep)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadJSON(f"Not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).") from None
    except UnicodeDecodeError:
        raise BadJSON("Not valid JSON: the text is not UTF-8.") from None
    except RecursionError:
        raise BadJSON(f"Nested deeper than {MAX_JSON_DEPTH} levels.") from None
    path = too_deep_at(value)
    if path is not None:
        raise BadJSON(f"Nested deeper than {MAX_JSON_DEPTH} levels.", path)
    return value


def parse_json(text: str | bytes, *, field: str) -> Any:
    """``read_json`` for a whole input named ``field``: ``InputError`` naming the place."""
    try:
        return read_json(text)
    except BadJSON as exc:
        raise InputError({exc.path or field: [exc.message]}) from None


def too_deep_at(value: Any) -> str | None:
    """The path of the first list or object nested deeper than ``MAX_JSON_DEPTH``, or None.

    Walks with a stack, not recursion, so it works on any value ``json.loads`` returned.
    """
    if not isinstance(value, (dict, list)):
        return None
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        node, depth, path = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return path
        pairs = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in pairs:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1, _child_path(node, path, key, child, depth)))
    return None


def _child_path(node: dict | list, path: str, key, child: dict | list, depth: int) -> str:
    """The path named in an error: a few levels, and not into runs of lists in lists."""
    if depth > NAMED_LEVELS or (isinstance(node, list) and isinstance(child, list)):
        return path
    if isinstance(node, list):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)
