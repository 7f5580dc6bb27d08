"""Report builders: one module per task kind, found by the kind's name.

A study whose kind has no builder still gets the figures every study gets (progress and
agreement); adding a kind's statistics is adding a module here with a ``KindReport``
subclass, nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from .base import KindReport

_NOT_BUILDERS = {"base", "common", "agreement"}


@cache
def all_reports() -> dict[str, KindReport]:
    """Kind name → builder, for every module in this package."""
    for module in pkgutil.iter_modules(__path__):
        if module.name not in _NOT_BUILDERS:
            importlib.import_module(f"{__name__}.{module.name}")
    builders = {}
    for cls in KindReport.__subclasses__():
        if cls.kind in builders:
            raise RuntimeError(f"Two report builders for kind {cls.kind!r}.")
        builders[cls.kind] = cls()
    return builders


def report_for(kind: str) -> KindReport:
    """The kind's builder, or the base one (no kind-specific figures)."""
    return all_reports().get(kind) or KindReport()
