"""The human answers a study's reports count, as rows: what automatic raters learn from
(a trained rater's training data, an LLM rater's few-shot examples).

The reports' human population (``StudyData.population("passed").humans().analysed()``)
is: people's answers (no model, no adjudicator), no attention-check pages, no participant
a researcher excluded, none a study's attention checks flagged. A rater trained or
prompted on the humans must see exactly those answers, so the same rule is written once
here as a query (the reports read columns; a rater needs each answer with its item).
``tests/integration/test_trained_raters.py`` checks that the two agree.
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, QuerySet

from annotation.models import Enrollment, Participant, Response, Study

NOT_HUMAN = (Participant.Source.MODEL, Participant.Source.ADJUDICATOR)


def human_answers(study: Study) -> QuerySet[Response]:
    """The study's human responses the reports count (``passed`` population), with their
    items, in item then response order."""
    excluded = Enrollment.objects.filter(participant=OuterRef("participant"), study=study, excluded=True)
    return (
        Response.objects.filter(study=study, is_attention_check=False, flagged=False)
        .exclude(participant__source__in=NOT_HUMAN)
        .exclude(Exists(excluded))
        .select_related("item")
        .order_by("item_id", "id")
    )
