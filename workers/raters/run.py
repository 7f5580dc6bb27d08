"""One loop for every model that answers a study as a participant: the LLM rater, the LLM
simulator (an LLM rater on a simulation study) and the trained rater.

A ``ModelRater`` says who it is (its participant's definition), which items it may not
answer, and how it answers a batch; ``answer_as_model`` does the rest the same way for all
of them: the model participant, the items it has not answered yet (a rerun adds nothing,
a cancelled run resumes), batches stored through ``store_model_answers`` (the kind's
validation, the one writer), progress after each batch, and one summary shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from annotation.models import Item, Study
from annotation.services.analysis.model_answers import (
    ModelAnswer,
    ModelAnswersResult,
    items_for_model,
    model_participant,
    store_model_answers,
)
from annotation.services.jobs import Progress, no_progress


class ModelRater(Protocol):
    """A model answering a study's items as a participant (``answer_as_model`` runs it)."""

    @property
    def definition(self) -> dict:
        """Its model participant's definition (``services.analysis.model_answers.RaterDefinition``)."""
        ...

    def leaves_out(self, study: Study) -> set[str]:
        """External ids of the items it may not answer (a trained rater's training items)."""
        ...

    def answer(self, study: Study, items: Sequence[Item]) -> list[ModelAnswer]:
        """Its answers to one batch of items (loading its model on the first call)."""
        ...


def answer_as_model(
    study: Study, rater: ModelRater, *, progress: Progress = no_progress, batch: int
) -> ModelAnswersResult:
    """Answer every item of ``study`` the rater has not answered, ``batch`` items per stored
    step (one transaction, one progress report); the whole run's result."""
    participant = model_participant(rater.definition)
    todo = list(items_for_model(study, participant))
    left_out = rater.leaves_out(study)
    items = [item for item in todo if item.external_id not in left_out]
    result = ModelAnswersResult()
    progress(0, len(items), f"{len(items)} items to answer")
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        result += store_model_answers(study, participant, rater.answer(study, chunk))
        done = start + len(chunk)
        progress(done, len(items), f"{done} of {len(items)} items answered")
    return replace(
        result, participant=participant.platform_worker_id, items=len(items), left_out=len(todo) - len(items)
    )
