"""The human answers a study's reports count, as rows: what automatic raters learn from
(a trained rater's training data, an LLM rater's few-shot examples).

The reports' human population (``StudyData.population("passed").humans().analysed()``)
is: people's answers (no model, no adjudicator), no attention-check pages, no participant
a researcher excluded, none flagged in the study. A rater trained or prompted on the
humans must see exactly those answers: the rule is ``populations.counts_q`` (the reports
read the same rule as a mask; a rater needs each answer with its item).
``tests/integration/test_trained_raters.py`` checks that the two agree.
"""

from __future__ import annotations

from django.db.models import QuerySet

from annotation.models import Response, Study
from annotation.services.populations import NOT_HUMAN, counting_answers

__all__ = ["NOT_HUMAN", "human_answers"]


def human_answers(study: Study) -> QuerySet[Response]:
    """The study's human responses the reports count (``passed`` population, the answers
    that count: ``populations.counting_answers``), with their items and each item's study
    (whose config a kind reads), in item then response order."""
    return counting_answers(study).select_related("item__study").order_by("item_id", "id")
