"""Answers given by models: LLM simulators, LLM raters and trained raters.

A model is a participant with source ``model`` and a recorded definition (what kind of
rater, which model, which prompt or training run, which version). Its answers go through
the kind's validation and the same writer as an imported answer
(``store_answer_given_elsewhere``), so every report, export and agreement figure treats
them like anyone else's; ``scoring`` tells them apart by the source. Their raw outputs
are kept as ``ModelOutput`` rows, including the ones that could not be parsed or that
the kind refused: those are counted and never guessed into an answer.

Model answers take no slot (``populations.keeps_slot``, the one slot rule, which an import
of a model's answers follows too): a rater answering every item must not leave the people
with nothing to do. Attention checks are for people, so ``items_for_model`` leaves
them out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import PurePath

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from annotation.errors import InputError, checked, flatten_errors
from annotation.models import Enrollment, Item, ModelOutput, Participant, Study
from annotation.services.participation.assignment import next_positions
from annotation.services.participation.participants import count_answers, enroll, participant_by_platform_id
from annotation.services.participation.submission import store_answer_given_elsewhere

from .human_answers import human_answers

RATER_KINDS = ("llm", "simulator", "trained", "judge")
FAILED_CALL = "failed_call"  # the details key of an output whose call failed (``forget_failed_calls``)


class RaterDefinition(serializers.Serializer):
    """What a model participant is. ``kind``: an LLM rater, an LLM simulator (a rater on
    a ``simulation`` study), a trained rater or a judge behind an endpoint; ``model``: the
    local path or name of the model; ``version``: of the prompt or of the training run.
    Other keys (shots, seed, decoding, metrics…) are kept as given and are part of its identity."""

    kind = serializers.ChoiceField(choices=RATER_KINDS)
    model = serializers.CharField(max_length=500)
    version = serializers.CharField(max_length=100)

    def validate(self, attrs: dict) -> dict:
        return {**self.initial_data, **attrs}


def rater_name(definition: dict) -> str:
    """A short, stable id for the definition: ``kind:model-name:version:hash``.

    Two definitions that differ anywhere (another shot count, another seed) are two
    raters; the same definition run again is the same participant."""
    canonical = json.dumps(definition, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:10]
    model = PurePath(str(definition["model"]).rstrip("/")).name or "model"
    return f"{definition['kind']}:{model[:80]}:{str(definition['version'])[:40]}:{digest}"


def model_participant(definition: dict) -> Participant:
    """The participant of this rater definition, created on first use."""
    definition = checked(RaterDefinition, definition, place="definition")
    name = rater_name(definition)
    return participant_by_platform_id(Participant.Source.MODEL, name, defaults={"definition": definition})


def items_for_model(study: Study, participant: Participant) -> QuerySet[Item]:
    """The study's items this model has not answered (nor failed to answer), without the
    attention checks, in a stable order: what a run, or a rerun, still has to do. Each
    with its study (the kind reads its config for every item it answers and validates)."""
    done = ModelOutput.objects.filter(participant=participant, study=study).values("item_id")
    return (
        Item.objects.filter(study=study, is_attention_check=False)
        .select_related("study")
        .exclude(pk__in=done)
        .exclude(assignments__participant=participant)
        .order_by("pk")
    )


def forget_failed_calls(study: Study, participant: Participant) -> int:
    """Delete the model's outputs on ``study`` that record a failed call (no answer, never
    parsed), so that a rerun asks those items again; how many. The job that recorded them
    keeps their count in its summary."""
    deleted, _ = ModelOutput.objects.filter(
        study=study, participant=participant, response__isnull=True, **{f"details__{FAILED_CALL}": True}
    ).delete()
    return deleted


@dataclass(frozen=True)
class HumanExample:
    """A person's answer to an item, with the page state they answered on: the material
    of a few-shot example for a model rater."""

    item: Item
    state: dict
    answer: dict


def human_examples(study: Study) -> list[HumanExample]:
    """The study's answers given by people, as the reports count them (``human_answers``:
    not models or adjudicators, not flagged, no excluded participant, no attention check),
    complete ones only, in a stable order. A rater's prompt for an item draws from the ones
    on other items; a trained rater learns from the same answers."""
    responses = human_answers(study).filter(incomplete=False).select_related("assignment").order_by("pk")
    examples = []
    for response in responses:
        response.item.study = study
        examples.append(HumanExample(response.item, dict(response.assignment.state or {}), response.answer))
    return examples


@dataclass(frozen=True)
class ModelAnswer:
    """One model output for one item. ``answer`` is the output parsed into the kind's
    answer, or None when it could not be parsed (``error`` says why); ``state`` is the
    page state the model saw (display order…), as a person's assignment records it."""

    item: Item
    raw: str
    answer: dict | None
    state: dict = field(default_factory=dict)
    error: str = ""
    details: dict = field(default_factory=dict)
    failed: bool = False  # no answer came (an endpoint's call failed or was refused): tried again on a rerun


@dataclass(frozen=True)
class ModelAnswersResult:
    """What a model's answers came to: counts per batch (``store_model_answers``), added up
    over a run, and, for a whole run (``workers.raters.run.answer_as_model``), who answered
    and how many items it had. ``summary()`` is the one shape of every model rater job's result."""

    created: int = 0
    skipped: int = 0  # already answered (or already failed) by this model: a rerun adds nothing
    unparseable: int = 0
    invalid: int = 0  # parsed, but the kind's validation refused it
    failed: int = 0  # no reply to parse: a judge's call failed or was refused (recorded, retried on a rerun)
    errors: dict[str, int] = field(default_factory=dict)  # reason → count, for the job's summary
    participant: str = ""  # the model participant's platform id (a run's)
    items: int = 0  # the items the run set out to answer
    left_out: int = 0  # items the model may not answer (a trained rater's training items)

    def __add__(self, other: ModelAnswersResult) -> ModelAnswersResult:
        """The counts added up; who answered and how many items stay this result's."""
        errors = dict(self.errors)
        for reason, count in other.errors.items():
            errors[reason] = errors.get(reason, 0) + count
        return replace(
            self,
            created=self.created + other.created,
            skipped=self.skipped + other.skipped,
            unparseable=self.unparseable + other.unparseable,
            invalid=self.invalid + other.invalid,
            failed=self.failed + other.failed,
            errors=errors,
        )

    def summary(self) -> dict:
        """The job's result for the LLM rater, the LLM simulator and the trained rater alike."""
        return {
            "participant": self.participant,
            "items": self.items,
            "left_out": self.left_out,
            "created": self.created,
            "skipped": self.skipped,
            "unparseable": self.unparseable,
            "invalid": self.invalid,
            "failed": self.failed,
            "errors": dict(self.errors),
        }


def store_model_answers(
    study: Study, participant: Participant, answers: Iterable[ModelAnswer], *, now: datetime | None = None
) -> ModelAnswersResult:
    """Validate and store a batch of one model's answers, in one transaction.

    Each answer is checked by the study's kind exactly as a person's would be; one that
    fails is recorded with its reason and counted, and the others are stored. An item
    this model already has an output for is skipped.
    """
    if participant.source != Participant.Source.MODEL:
        raise InputError({"participant": ["Only a model participant answers through this path."]})
    answers = list(answers)
    now = now or timezone.now()
    with transaction.atomic():
        done = set(
            ModelOutput.objects.filter(
                participant=participant, item__in=[a.item for a in answers]
            ).values_list("item_id", flat=True)
        )
        # The model's places in its sequence, read once for the batch (not per answer).
        positions = next_positions(study, [participant.pk])[participant.pk]
        result, points = ModelAnswersResult(), 0.0
        for answer in answers:
            if answer.item.pk in done:
                result += ModelAnswersResult(skipped=1)
                continue
            done.add(answer.item.pk)
            outcome, response_points = _store_one(study, participant, answer, now, positions)
            result += outcome
            points += response_points
        if result.created:
            enroll(participant=participant, study=study, status=Enrollment.Status.COMPLETED)
            count_answers(
                participant_id=participant.pk, study_id=study.pk, answers=result.created, points=points
            )
    return result


def _store_one(
    study: Study, participant: Participant, answer: ModelAnswer, now: datetime, positions: Iterator[int]
) -> tuple[ModelAnswersResult, float]:
    """Store one answer (a page numbered from ``positions``) or the reason it was refused
    (no page: a refused answer leaves no gap in the model's sequence)."""
    output = ModelOutput(
        study=study, item=answer.item, participant=participant, raw=answer.raw, details=answer.details
    )
    if answer.answer is None and answer.failed:
        output.error = (answer.error or "call failed")[:500]
        output.details = {**output.details, FAILED_CALL: True}
        output.save()
        return ModelAnswersResult(failed=1, errors={"failed": 1}), 0.0
    if answer.answer is None:
        output.error = (answer.error or "unparseable")[:500]
        output.save()
        return ModelAnswersResult(unparseable=1, errors={"unparseable": 1}), 0.0
    item = answer.item
    item.study = study
    try:
        validated = study.task_kind.validate_answer(item, answer.answer, state=answer.state)
    except ValidationError as exc:
        reason = "; ".join(
            f"{k or 'answer'}: {' '.join(map(str, v))}" for k, v in flatten_errors(exc.detail).items()
        )
        output.error = f"refused by the kind: {reason}"[:500]
        output.save()
        return ModelAnswersResult(invalid=1, errors={"invalid": 1}), 0.0
    response = store_answer_given_elsewhere(
        study=study,
        participant=participant,
        item=item,
        answer=validated,
        state=answer.state,
        answered_at=now,
        position=next(positions),
    )
    output.response = response
    output.save()
    return ModelAnswersResult(created=1), response.points or 0.0
