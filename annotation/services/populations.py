"""Which answers count: the one definition behind quotas, progress and the reports.

An answer *counts* (toward ``annotations_per_item``, in every progress figure, in the
reports' ``passed`` human population, in what raters learn from) when:

- a human gave it: its participant's source is not in ``NOT_HUMAN`` (a model rater's and
  an adjudicator's answers are answers about the humans', never a human annotation);
- its participant is not flagged in this study (``Enrollment.flagged``, written only by
  ``flags.flag_in_study``; a screen-out flags, so screened-out answers are out too);
- its participant is not excluded from this study (``Enrollment.excluded``);
- it is not an attention check (those test the participant, not the items).

Two renderings of the same rule: ``COUNTS`` (and ``counting_answers``), a queryset
filter on ``Response`` for the ORM readers; ``counts_mask``, the NumPy mask over the
columns ``scoring/data.py`` reads, which ``StudyData.population("passed").humans()
.analysed()`` equals. The flag is read through ``Response.flagged``, the per-response
copy of the enrollment's flag that ``flag_in_study`` keeps equal to it.
"""

from __future__ import annotations

import numpy as np
from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from annotation.models import Enrollment, Participant, Response, Study

# Participants whose answers are not human annotations.
MACHINE = Participant.Source.MODEL  # LLM simulators and automatic raters
ADJUDICATOR = Participant.Source.ADJUDICATOR  # a researcher's final answer on a disagreement
NOT_HUMAN = (MACHINE, ADJUDICATOR)


def _excluded() -> Exists:
    return Exists(
        Enrollment.objects.filter(participant=OuterRef("participant"), study=OuterRef("study"), excluded=True)
    )


def humans_q() -> Q:
    """Answers given by people (any flag, any exclusion)."""
    return ~Q(participant__source__in=NOT_HUMAN)


def counts_q() -> Q:
    """The rule, as a filter on ``Response``."""
    return humans_q() & Q(flagged=False, is_attention_check=False) & ~Q(_excluded())


def counting_answers(study: Study) -> QuerySet[Response]:
    """The study's answers that count."""
    return Response.objects.filter(study=study).filter(counts_q())


def counted_per_item() -> Coalesce:
    """An ``Item`` annotation: how many of the item's answers count."""
    rows = (
        Response.objects.filter(item=OuterRef("pk"))
        .filter(counts_q())
        .values("item")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(rows, output_field=IntegerField()), 0)


def counted_per_study() -> Coalesce:
    """A ``Study`` annotation: how many of the study's answers count."""
    rows = (
        Response.objects.filter(study=OuterRef("pk"))
        .filter(counts_q())
        .values("study")
        .annotate(n=Count("id"))
        .values("n")
    )
    return Coalesce(Subquery(rows, output_field=IntegerField()), 0)


def counts_mask(*, flagged, excluded, attention, machine, adjudicator) -> np.ndarray:
    """The rule over response columns (booleans, one per response), as the reports read
    them: ``machine`` / ``adjudicator`` are the participant's source in ``NOT_HUMAN``."""
    return ~flagged & ~excluded & ~attention & ~machine & ~adjudicator


def enrollment_counts(enrollment: Enrollment) -> bool:
    """Whether this enrollment's answers count (its participant is a human, neither
    flagged nor excluded in the study)."""
    return not (enrollment.flagged or enrollment.excluded)


def percent(part: float, whole: float) -> int:
    """A share as a whole percent, capped at 100 (more answers than wanted is 100 %), 0 when
    there is nothing to do: the one rounding for progress bars, the admin and the pages."""
    return min(100, round(100 * part / whole)) if whole else 0
