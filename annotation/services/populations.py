"""Which answers count: the one definition behind quotas, progress and the reports.

An answer *counts* (toward ``annotations_per_item``, in every progress figure, in the
reports' ``passed`` human population, in what raters learn from) when:

- a human gave it: its participant's source is not in ``NOT_HUMAN`` (a model rater's and
  an adjudicator's answers are answers about the humans', never a human annotation);
- its participant is not flagged in this study (``Enrollment.flagged``, written only by
  ``flags.flag_in_study``; a screen-out flags, so screened-out answers are out too);
- its participant is not excluded from this study (``Enrollment.excluded``);
- it is not a test answer (``Enrollment.is_test``: a researcher who manages the study trying
  it; ``real_enrollments``, ``real_answers``, ``not_a_test_q`` and ``not_a_test_sql`` leave
  these out of every list, export, API answer and report altogether (so ``counts_mask``
  never sees them), and the study's researchers can discard them);
- it is not an attention check (those test the participant, not the items).

The reports' ``authentic`` population is ``passed`` less the answers whose authenticity
signals show a strong sign (``Response.strong_sign``, set when the answer is stored by
``participation.authenticity.strong_signs``, docs/authenticity.md): ``authentic_mask``. It
only narrows the reports; such answers still count toward quotas and progress (a sign is
evidence for a researcher to weigh, not a verdict). Answers without signals (a model's, an
import, a page without free text, a page whose script sent none) have no strong sign.

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

from annotation.models import Enrollment, Item, Participant, Response, Study

# Participants whose answers are not human annotations.
MACHINE = Participant.Source.MODEL  # LLM simulators and automatic raters
ADJUDICATOR = Participant.Source.ADJUDICATOR  # a researcher's final answer on a disagreement
NOT_HUMAN = (MACHINE, ADJUDICATOR)


def _excluded() -> Exists:
    """The answer's enrollment is excluded or a test (either way its answers do not count)."""
    return Exists(
        Enrollment.objects.filter(participant=OuterRef("participant"), study=OuterRef("study")).filter(
            Q(excluded=True) | Q(is_test=True)
        )
    )


def real_answers(study: Study) -> QuerySet[Response]:
    """The study's answers but a researcher's tests (``Enrollment.is_test``): every answer
    the reports read (counting or not)."""
    tests = Enrollment.objects.filter(study=study, is_test=True).values("participant_id")
    return Response.objects.filter(study=study).exclude(participant_id__in=tests)


# The same, in the exports' SQL (``r``: the response row, or any row with ``participant_id``
# and ``study_id``): no test enrollment of its participant in its study.
NOT_A_TEST_SQL = (
    "NOT EXISTS (SELECT 1 FROM {table} t WHERE t.participant_id = {row}.participant_id "
    "AND t.study_id = {row}.study_id AND t.is_test)"
)


def not_a_test_sql(row: str) -> str:
    return NOT_A_TEST_SQL.format(table=Enrollment._meta.db_table, row=row)


def not_a_test_q() -> Q:
    """``real_answers`` as a filter on ``Response`` over several studies (the API's list)."""
    tests = Enrollment.objects.filter(
        participant=OuterRef("participant"), study=OuterRef("study"), is_test=True
    )
    return ~Q(Exists(tests))


def real_enrollments(study: Study) -> QuerySet[Enrollment]:
    """The study's enrollments but a researcher's tests: the participants lists and counts."""
    return Enrollment.objects.filter(study=study, is_test=False)


def people_items(study: Study) -> QuerySet[Item]:
    """The items people are asked to answer: the ordinary ones (no attention checks) within
    the study's human subset, if it has one (``authoring.human_subset``: the others are the
    model raters' alone). The items the assignment serves and the quota and progress count."""
    return Item.objects.filter(study=study, is_attention_check=False, for_humans=True)


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


def items_per_study() -> Coalesce:
    """A ``Study`` annotation: how many task items it has (attention checks are pages, not
    items of the study's figures or quota)."""
    rows = (
        Item.objects.filter(study=OuterRef("pk"), is_attention_check=False)
        .values("study")
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


def authentic_mask(*, strong_sign) -> np.ndarray:
    """Of the ``passed`` population's responses (booleans, one per response), those in the
    ``authentic`` population: no strong sign of pasted or untyped text."""
    return ~strong_sign


def keeps_slot(*, human: bool, flagged: bool = False, excluded: bool = False, is_test: bool = False) -> bool:
    """The slot rule: ``Item.slots_taken`` is the item's pages held (whoever holds them)
    plus its answers that count, whatever path stored them. An answered page keeps its
    item's slot exactly when its answer counts on the answerer's side: a human's
    (``NOT_HUMAN``, a model rater or an adjudicator, run or imported, keeps none, so a
    machine answering every item never tells people a study is full), in an enrollment
    neither flagged, excluded nor a researcher's test. Every writer of answers asks here:
    a page's submit (``submission``), an import of any source (``answer_imports``), a flag or an
    exclusion moving answers in or out (``flags``); a model's and an adjudicator's answers
    are never human. (An attention check's item wants no number of answers: its slots
    decide nothing.)"""
    return human and not (flagged or excluded or is_test)


def enrollment_keeps_slots(enrollment: Enrollment) -> bool:
    """``keeps_slot`` for the answers of ``enrollment`` (its participant loaded)."""
    return keeps_slot(
        human=enrollment.participant.source not in NOT_HUMAN,
        flagged=enrollment.flagged,
        excluded=enrollment.excluded,
        is_test=enrollment.is_test,
    )
