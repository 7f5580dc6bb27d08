"""Report builders: one module per task kind, named by the kind itself.

Each kind names its builder by dotted path (``TaskKind.report``, a string because the
domain does not import ``scoring``); this package resolves it. A study whose kind names
none still gets the figures every study gets (progress and agreement). Adding a kind's
statistics is adding a module here with a ``KindReport`` subclass and naming it in the kind.
"""

from __future__ import annotations

from functools import cache

from django.utils.module_loading import import_string

from annotation.kinds import all_kinds

from .base import KindReport


@cache
def all_reports() -> dict[str, KindReport]:
    """Kind name → builder, for every kind that names one."""
    builders = {}
    for name, kind in all_kinds().items():
        if not kind.report:
            continue
        cls = import_string(kind.report)
        if not (isinstance(cls, type) and issubclass(cls, KindReport)):
            raise RuntimeError(f"{kind.report} (the report of kind {name!r}) is not a KindReport.")
        builders[name] = cls()
    return builders


def report_for(kind: str) -> KindReport:
    """The kind's builder, or the base one (no kind-specific figures)."""
    return all_reports().get(kind) or KindReport()
