"""The registry of task kinds: ``KINDS`` names the class of each, by dotted path.

A kind is a module here (a package when it has steps and pages of its own, as the boundary
game has); adding one is adding it (and its template) and its line in ``KINDS``. The
classes are imported on first use, so importing this package stays cheap.
"""

from __future__ import annotations

from functools import cache

from django.utils.module_loading import import_string

from .base import Observation, Score, TaskKind

__all__ = ["KINDS", "Observation", "Score", "TaskKind", "UnknownKind", "all_kinds", "get_kind"]

KINDS: tuple[str, ...] = (
    "annotation.kinds.boundary.Boundary",
    "annotation.kinds.claim.Claim",
    "annotation.kinds.likert.Likert",
    "annotation.kinds.plausibility.Plausibility",
    "annotation.kinds.questionnaire.Questionnaire",
    "annotation.kinds.ranking.Ranking",
    "annotation.kinds.simulation.Simulation",
)


class UnknownKind(LookupError):
    """A study names a kind that no module defines."""


@cache
def all_kinds() -> dict[str, TaskKind]:
    """Name → kind object, for every class in ``KINDS``."""
    found: dict[str, TaskKind] = {}
    for dotted in KINDS:
        cls = import_string(dotted)
        if not (isinstance(cls, type) and issubclass(cls, TaskKind) and cls.name):
            raise RuntimeError(f"{dotted} is not a named TaskKind.")
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
