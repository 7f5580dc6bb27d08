"""Reading JSON that someone sent: API bodies, the upload page, JSON Lines rows, study files.

One reader, so every way in refuses the same bad text with the same message and names where
the problem is, never with a ``RecursionError`` or a traceback. Nesting is bounded
(``MAX_JSON_DEPTH``): no study file, item or answer needs more than a few levels, and deeper
values would overflow the recursive code that later walks them (copying, validating, saving).

It also refuses what JSON allows or Python reads but nothing after it can keep: ``NaN`` and
``Infinity`` (not JSON; PostgreSQL's ``jsonb`` refuses them), integers of more than 4,300
digits (Python refuses to read them), a NUL character (PostgreSQL text and ``jsonb`` cannot
hold one) and a lone UTF-16 surrogate such as ``\\ud800`` (no UTF-8 for it: the answer
that echoes it, and the database, would fail). Each is a 400 naming where it is.
"""

from __future__ import annotations

import json
import re
from typing import Any

from annotation.errors import InputError

MAX_JSON_DEPTH = 64
NAMED_LEVELS = 3  # an error names at most this many levels (``items[3].provenance``)


class BadJSON(ValueError):
    """The text is not JSON we read; ``path`` is where inside the value (``""``: the whole)."""

    def __init__(self, message: str, path: str = ""):
        self.message, self.path = message, path
        super().__init__(message)


NOT_A_NUMBER = "Not valid JSON: NaN and Infinity are not numbers JSON allows."
TOO_MANY_DIGITS = "Not valid JSON: a number with more digits than we read (at most 4300)."
NUL_CHARACTER = "Contains a NUL character (\\u0000), which cannot be stored."
LONE_SURROGATE = "Contains a lone UTF-16 surrogate (\\ud800–\\udfff), which is not text."


def _refuse_constant(name: str):
    raise BadJSON(NOT_A_NUMBER)


def read_json(text: str | bytes) -> Any:
    """The value of a JSON text, or ``BadJSON`` (bad syntax, bad encoding, nested too deep,
    NaN or Infinity, a huge integer, a NUL character or a lone surrogate in a string)."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except BadJSON:
        raise
    except json.JSONDecodeError as exc:
        raise BadJSON(f"Not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).") from None
    except UnicodeDecodeError:
        raise BadJSON("Not valid JSON: the text is not UTF-8.") from None
    except RecursionError:
        raise BadJSON(f"Nested deeper than {MAX_JSON_DEPTH} levels.") from None
    except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion"
        raise BadJSON(TOO_MANY_DIGITS) from None
    path = too_deep_at(value)
    if path is not None:
        raise BadJSON(f"Nested deeper than {MAX_JSON_DEPTH} levels.", path)
    found = bad_text_at(value)
    if found is not None:
        raise BadJSON(found[1], found[0])
    return value


def text_problem(text: str) -> str | None:
    """Why this text cannot be kept (a NUL, a lone surrogate), or None when it can."""
    if "\x00" in text:
        return NUL_CHARACTER
    if _SURROGATE.search(text):
        return LONE_SURROGATE
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def bad_text_at(value: Any) -> tuple[str, str] | None:
    """(path, message) of the first string or key that cannot be kept, or None.

    Walks with a stack (``value`` is no deeper than ``MAX_JSON_DEPTH`` by now).
    """
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, str):
            problem = text_problem(node)
            if problem:
                return path, problem
        elif isinstance(node, (dict, list)):
            pairs = node.items() if isinstance(node, dict) else enumerate(node)
            for key, child in pairs:
                if isinstance(key, str) and (problem := text_problem(key)):
                    return path, problem  # not the key itself: the answer must not echo it
                child_path = _child_path(node, path, key, child, depth)
                stack.append((child, child_path, depth + 1))
    return None


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


def _child_path(node: dict | list, path: str, key, child: Any, depth: int) -> str:
    """The path named in an error: a few levels, and not into runs of lists in lists."""
    if depth > NAMED_LEVELS or (isinstance(node, list) and isinstance(child, list)):
        return path
    if isinstance(node, list):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)
