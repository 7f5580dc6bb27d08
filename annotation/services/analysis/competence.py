"""Annotators' estimated competence beside their other figures on the participants page.

The reports estimate it (MACE and Dawid–Skene, ``scoring/reports/competence.py``) and
store it by pseudonym; ``annotation`` does not import ``scoring``, so ``ScoringConfig.ready``
registers the function that reads the stored figures (``register_competence_reader``).
Without reports (or without a reader) every participant's competence is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeGuard

from annotation.models import Enrollment, Study
from annotation.services.pseudonyms import PseudonymCache


@dataclass(frozen=True)
class Interval:
    """A competence and its 95% interval (None: undefined; ends None: no interval)."""

    value: float | None
    low: float | None = None
    high: float | None = None


NO_FIGURE = Interval(None)


@dataclass(frozen=True)
class Competence:
    """One annotator's competence over the study's questions: MACE and Dawid–Skene on the
    nominal ones, the correlation with the others' median on the ordinal ones, each with its
    interval. ``not_identifiable``: why there is no figure (the answers cannot estimate it,
    or too few answers, ``stats.competence``)."""

    mace: Interval
    dawid_skene: Interval
    median_correlation: Interval
    answers: int
    not_identifiable: str = ""

    def measure(self, name: str) -> Interval:
        return getattr(self, name)


CompetenceReader = Callable[[Study], dict[str, Competence]]
_readers: list[CompetenceReader] = []
# ``?sort=`` values of the participants page and API that order by competence: by the lower
# end of its interval (a wide interval from few or erratic answers ranks low), lowest first.
COMPETENCE_SORTS = {"competence": False, "-competence": True}
# The measure the page sorts by: MACE when the study has nominal questions, else the scales'.
SORTED_MEASURES = ("mace", "median_correlation")


def register_competence_reader(reader: CompetenceReader) -> None:
    """Set the function that reads annotators' competence by pseudonym (one; the last wins)."""
    _readers[:] = [reader]


def study_competence(study: Study) -> dict[str, Competence]:
    """Pseudonym → competence, as the study's last reports estimated it."""
    return _readers[0](study) if _readers else {}


def sorted_measure(competence: dict[str, Competence]) -> str:
    """The measure the study's participants are compared by: the first of ``SORTED_MEASURES``
    that someone has a figure for (MACE when none has any)."""
    for measure in SORTED_MEASURES:
        if any(c.measure(measure).value is not None for c in competence.values()):
            return measure
    return SORTED_MEASURES[0]


def sorted_enrollments(study: Study, enrollments, competence: dict[str, Competence], sort: str | None):
    """The enrollments in a ``COMPETENCE_SORTS`` order (``by_competence``), or as given for
    no sort: the one reading of ``?sort=`` for the participants page and its API."""
    if sort not in COMPETENCE_SORTS:
        return enrollments
    return by_competence(study, list(enrollments), competence, descending=COMPETENCE_SORTS[sort])


def by_competence(
    study: Study, enrollments: list[Enrollment], competence: dict[str, Competence], *, descending: bool
) -> list[Enrollment]:
    """The enrollments ordered by the lower end of their competence's interval (the study's
    ``sorted_measure``); figures without an interval after those with one, by their value;
    ties and unknowns by enrollment order, unknowns last either way. Needs every enrollment's
    pseudonym: a hash each, no query."""
    names = PseudonymCache(study.pseudonym_salt)
    measure = sorted_measure(competence)
    sign = -1.0 if descending else 1.0

    def key(indexed: tuple[int, Enrollment]) -> tuple:
        position, enrollment = indexed
        participant = enrollment.participant
        name = names.get(
            participant.pk, participant.source, participant.platform_worker_id, participant.public_id
        )
        found = competence.get(name)
        figure = found.measure(measure) if found is not None else NO_FIGURE
        if _known(figure.low):
            return (0, sign * figure.low, position)
        if _known(figure.value):
            return (1, sign * figure.value, position)
        return (2, 0.0, position)

    return [enrollment for _, enrollment in sorted(enumerate(enrollments), key=key)]


def _known(value: float | None) -> TypeGuard[float]:
    return value is not None and not math.isnan(value)
