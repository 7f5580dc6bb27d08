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

from annotation.models import Enrollment, Study

from .pseudonyms import PseudonymCache


@dataclass(frozen=True)
class Competence:
    """One annotator's competence over the study's categorical questions (None: undefined;
    ``not_identifiable``: why, when the answers cannot estimate it, ``stats.competence``)."""

    mace: float | None
    dawid_skene: float | None
    answers: int
    not_identifiable: str = ""


CompetenceReader = Callable[[Study], dict[str, Competence]]
_readers: list[CompetenceReader] = []
# ``?sort=`` values of the participants page that order by competence (MACE's).
COMPETENCE_SORTS = {"competence": False, "-competence": True}


def register_competence_reader(reader: CompetenceReader) -> None:
    """Set the function that reads annotators' competence by pseudonym (one; the last wins)."""
    _readers[:] = [reader]


def study_competence(study: Study) -> dict[str, Competence]:
    """Pseudonym → competence, as the study's last reports estimated it."""
    return _readers[0](study) if _readers else {}


def by_competence(
    study: Study, enrollments: list[Enrollment], competence: dict[str, Competence], *, descending: bool
) -> list[Enrollment]:
    """The enrollments ordered by MACE competence (ties and unknowns by enrollment order,
    unknowns last either way). Needs every enrollment's pseudonym: a hash each, no query."""
    names = PseudonymCache(study.pseudonym_salt)

    def key(indexed: tuple[int, Enrollment]) -> tuple:
        position, enrollment = indexed
        participant = enrollment.participant
        name = names.get(
            participant.pk, participant.source, participant.platform_worker_id, participant.public_id
        )
        found = competence.get(name)
        value = found.mace if found is not None else None
        if value is None or math.isnan(value):
            return (1, 0.0, position)
        return (0, -value if descending else value, position)

    return [enrollment for _, enrollment in sorted(enumerate(enrollments), key=key)]
