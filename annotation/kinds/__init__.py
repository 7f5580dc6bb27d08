"""The registry of task kinds: every module in this package that defines a TaskKind.

Adding a kind is adding a module here (and its template); nothing else changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any

from .base import Observation, Score, TaskKind

__all__ = ["Observation", "Score", "TaskKind", "UnknownKind", "all_kinds", "get_kind"]


class UnknownKind(LookupError):
    """A study names a kind that no module defines."""


@cache
def all_kinds() -> dict[str, TaskKind]:
    """Name → kind object, for every module in this package."""
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            importlib.import_module(f"{__name__}.{module.name}")
    found: dict[str, TaskKind] = {}
    for cls in _subclasses(TaskKind):
        if cls.name:
            if cls.name in found:
                raise RuntimeError(f"Two task kinds are named {cls.name!r}.")
            found[cls.name] = cls()
    return dict(sorted(found.items()))


def get_kind(name: str) -> TaskKind:
    try:
        return all_kinds()[name]
    except KeyError:
        known = ", ".join(all_kinds())
        raise UnknownKind(f"Unknown kind {name!r}; known kinds: {known}.") from None


def _subclasses(cls: type[Any]) -> list[type[TaskKind]]:  # Any: TaskKind itself is abstract
    result: list[type[TaskKind]] = []
    for sub in cls.__subclasses__():
        result.append(sub)
        result.extend(_subclasses(sub))
    return result
