"""Adjudication: finding the items annotators disagree on and recording a final answer.

Disagreement is read through each kind's ``agreement_values``, so no kind is named here:
on a nominal question (a claim's label, each sentence's evidence mark) any two different
values disagree; on an ordinal or interval question (a Likert rating) values more than
``k`` apart do. The final answer is a ``Response`` of a participant whose source is
``adjudicator``, validated by the kind and stored by ``store_response`` like every other
answer; the annotators' answers are left as they are.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from annotation.errors import InputError
from annotation.models import Adjudication, Enrollment, Item, Participant, Response, Study
from annotation.services.participation.participants import count_answers, enroll, participant_by_platform_id
from annotation.services.participation.submission import store_answer_given_elsewhere
from annotation.services.populations import counting_answers
from annotation.services.pseudonyms import PseudonymCache

DEFAULT_POINTS_APART = 1
NOTE_MAX_CHARS = 5000  # a note says why; a longer text belongs in the study's own records
# Sources whose answers are not an annotator's: machine raters and adjudicators.


@dataclass
class Disagreement:
    """An item whose annotators disagree, on which questions, and whether it is settled."""

    item: Item
    answers: int
    questions: list[str] = field(default_factory=list)
    adjudicated: bool = False


@dataclass(frozen=True)
class AnswerView:
    """One annotator's answer as the adjudication page shows it."""

    pseudonym: str
    source: str
    answer: dict
    correct: bool | None
    response_id: int


def annotator_responses(study: Study):
    """The study's answers that count (``populations``: annotators, not machines, not
    adjudicators, no checks, nobody flagged or excluded in the study): the disagreements
    to adjudicate are among them."""
    return counting_answers(study)


def disagreeing_questions(observations: list[list], *, points_apart: int) -> list[str]:
    """The questions whose values differ: ``observations`` holds, per answer, its
    (unit, question, value, level) observations."""
    values: dict[tuple[str, str], list] = defaultdict(list)
    levels: dict[str, str] = {}
    for answer in observations:
        for observation in answer:
            values[(observation.unit, observation.question)].append(observation.value)
            levels[observation.question] = observation.level
    found = []
    for (_unit, question), given in values.items():
        if question in found or len(given) < 2:
            continue
        if levels[question] == "nominal":
            differ = len({repr(v) for v in given}) > 1
        else:
            differ = max(given) - min(given) > points_apart
        if differ:
            found.append(question)
    return found


def study_disagreements(
    study: Study, *, points_apart: int = DEFAULT_POINTS_APART, after: int = 0, limit: int | None = None
) -> list[Disagreement]:
    """The items at least two annotators answered differently, in item order: those after
    item id ``after``, at most ``limit`` of them (the scan stops there, so a page of a large
    study reads only as far as it shows)."""
    kind = study.task_kind
    settled = set(
        Adjudication.objects.filter(study=study, item_id__gt=after).values_list("item_id", flat=True)
    )
    query = (
        annotator_responses(study).filter(item_id__gt=after).select_related("item").order_by("item_id", "id")
    )
    found: list[Disagreement] = []
    for item, answers in _by_item(query.iterator(chunk_size=2000), study):
        questions = disagreeing_questions(
            [kind.agreement_values(item, answer) for answer in answers], points_apart=points_apart
        )
        if questions:
            found.append(Disagreement(item, len(answers), questions, item.pk in settled))
            if limit is not None and len(found) >= limit:
                break
    return found


def _by_item(responses, study: Study):
    """(item, [answers]) for consecutive responses of one item (responses in item order)."""
    item, answers = None, []
    for response in responses:
        if item is not None and response.item_id != item.pk:
            yield item, answers
            answers = []
        item = response.item
        item.study = study
        answers.append(response.answer)
    if item is not None:
        yield item, answers


def item_answers(study: Study, item: Item) -> list[AnswerView]:
    """The annotators' answers to ``item``, each under the participant's study pseudonym."""
    names = PseudonymCache(study.pseudonym_salt)
    query = annotator_responses(study).filter(item=item).select_related("participant").order_by("id")
    return [
        AnswerView(
            pseudonym=names.get(
                r.participant_id,
                r.participant.source,
                r.participant.platform_worker_id,
                r.participant.public_id,
            ),
            source=r.participant.source,
            answer=r.answer,
            correct=r.correct,
            response_id=r.pk,
        )
        for r in query
    ]


def adjudication_state(study: Study, item: Item) -> dict:
    """The page state the adjudication form is drawn with (a shuffled order, for kinds that
    shuffle), the same on every request so the form's answer maps back to the item."""
    return study.task_kind.prepare_assignment(item, random.Random(item.pk))


def adjudicator_for(user) -> Participant:
    """The researcher's adjudicator participant (one per account, shared by their studies)."""
    return participant_by_platform_id(Participant.Source.ADJUDICATOR, f"researcher-{user.pk}")


def adjudicate(*, study: Study, item: Item, answer: dict, note: str, user) -> Response:
    """Store ``answer`` as the item's final answer; bad input raises ``InputError``.

    The answer goes through the kind's validation and ``store_response``; it takes no
    slot from the participants and leaves every other response unchanged.
    """
    item.study = study
    kind = study.task_kind
    state = adjudication_state(study, item)
    errors: dict[str, list[str]] = {}
    if len(note) > NOTE_MAX_CHARS:
        errors["note"] = [f"Use at most {NOTE_MAX_CHARS} characters ({len(note)} given)."]
    try:
        validated = kind.validate_answer(item, answer, state=state)
    except ValidationError as exc:
        errors = {**InputError.from_validation(exc, "answer").errors, **errors}
    if errors:
        raise InputError(errors)
    now = timezone.now()
    try:
        with transaction.atomic():
            Item.objects.select_for_update().filter(pk=item.pk).values_list("pk", flat=True).first()
            if Adjudication.objects.filter(item=item).exists():
                raise InputError({"item": [f"Item {item.external_id!r} already has an adjudicated answer."]})
            judge = adjudicator_for(user)
            # Enrolled like an imported annotator, so that exports list the adjudicator
            # beside the participants whose answers it settles.
            enroll(participant=judge, study=study, status=Enrollment.Status.COMPLETED)
            response = store_answer_given_elsewhere(
                study=study, participant=judge, item=item, answer=validated, state=state, answered_at=now
            )
            count_answers(participant_id=judge.pk, study_id=study.pk, answers=1, points=response.points or 0)
            Adjudication.objects.create(study=study, item=item, response=response, note=note, decided_by=user)
    except IntegrityError as exc:
        raise InputError({"item": [f"Item {item.external_id!r} already has an adjudicated answer."]}) from exc
    return response
