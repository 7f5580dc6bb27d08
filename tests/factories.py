"""Test data, written once: studies, items, participants and answered pages.

``StudyFactory`` validates its config through the study's kind (when the kind exists: the
reports are also checked for a kind no module defines). ``ItemFactory`` has a trait per kind
with a payload the kind accepts. ``AnsweredResponseFactory`` stores an answered page the way
the site does, through the services, with the score the test dictates, and counts it on the
participant's enrollment as a submit does (``count_answers``); ``_store_answered`` is the one
place that calls them.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

import factory
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from factory.django import DjangoModelFactory

from annotation.kinds import get_kind
from annotation.models import Enrollment, Item, Participant, Response, Study
from annotation.services.access import researchers_group
from annotation.services.participation.assignment import create_assignment, next_positions, take_slots
from annotation.services.participation.participants import (
    count_answers,
    enroll,
    give_consent,
    participant_by_platform_id,
)
from annotation.services.participation.submission import store_response

CLAIM_PAYLOAD = {"claim": "X is in Y.", "sentences": ["One.", "Two.", "Three."]}


def validated_config(kind: str, config: dict | None) -> dict:
    """The config as the kind stores it (defaults filled in)."""
    return get_kind(kind).validate_config(config or {})


class StudyFactory(DjangoModelFactory):
    class Meta:
        model = Study

    kind = "claim"
    slug = factory.Sequence(lambda n: f"study-{n}")
    title = factory.LazyAttribute(lambda study: f"{study.kind} study")
    status = Study.Status.LIVE
    annotations_per_item = 3
    config = factory.LazyFunction(dict)

    @classmethod
    def _adjust_kwargs(cls, **kwargs):
        """Whatever config a test gives is stored as the kind would store it."""
        return {**kwargs, "config": validated_config(kwargs["kind"], kwargs["config"])}


class ItemFactory(DjangoModelFactory):
    """An item; the kind traits give a payload that kind accepts."""

    class Meta:
        model = Item

    class Params:
        attention_check = False  # the study file's name for it

    study = factory.SubFactory(StudyFactory)
    external_id = factory.Sequence(lambda n: f"i{n}")
    payload = factory.LazyFunction(lambda: dict(CLAIM_PAYLOAD))
    provenance = factory.LazyFunction(dict)
    gold = None
    is_attention_check = factory.LazyAttribute(lambda item: item.attention_check)

    @classmethod
    def from_specs(cls, study: Study, specs: list[dict]) -> dict[str, Item]:
        """Items from study-file item dicts, by external id."""
        return {spec["external_id"]: cls(study=study, **spec) for spec in specs}


class ParticipantFactory(DjangoModelFactory):
    """A participant (the model's defaults: an organic visitor); ``enrolled_in=study``
    enrols them and gives consent through the services, as the entry and consent pages do."""

    class Meta:
        model = Participant
        skip_postgeneration_save = True

    @factory.post_generation
    def enrolled_in(participant: Participant, create: bool, study: Study | None, **kwargs) -> None:
        if create and study is not None:
            give_consent(enroll(participant=participant, study=study))


def researcher_user(username: str, password: str | None = None, **fields):
    """An account in the researchers group (the group ``migrate`` creates), as an invitation makes one."""
    user = get_user_model().objects.create_user(username, password=password, **fields)
    user.groups.add(researchers_group())
    return user


def participant_named(study: Study, name: str, source: str = Participant.Source.LAB) -> Participant:
    """The participant with this platform id, enrolled in ``study`` (created on first use)."""
    participant = participant_by_platform_id(source, name)
    _enrolled(participant, study)
    return participant


def _enrolled(participant: Participant, study: Study) -> None:
    """Enrol ``participant`` in ``study`` (completed, as an import does) unless they are."""
    Enrollment.objects.get_or_create(
        participant=participant, study=study, defaults={"status": Enrollment.Status.COMPLETED}
    )


class AnsweredResponseFactory(DjangoModelFactory):
    """An answered page with the score the test dictates.

    ``participant`` may be a name (a platform id, enrolled on first use) and ``item`` an
    external id. ``seconds`` is the time the page was shown before the answer (None:
    unknown); ``answered_at`` defaults to an hour ago (so later rows are later).
    """

    class Meta:
        model = Response

    study = factory.SubFactory(StudyFactory)
    seconds: float | None = 20.0  # read by _create, not a field
    enrolled = False  # read by _create, not a field: the participant is enrolled in the study already
    source = Participant.Source.LAB  # of a participant given by name
    position: int | None = None  # read by _create, not a field: the page's place (None: the next)
    slot_taken = False  # read by _create, not a field: the item's slot was taken for it (a batch)
    answer = factory.LazyFunction(dict)
    points = None
    correct = None
    score_details = factory.LazyFunction(dict)
    display_order = factory.LazyFunction(dict)
    flagged = False
    answered_at = factory.LazyFunction(lambda: timezone.now() - timedelta(hours=1))

    @classmethod
    def from_specs(cls, study: Study, specs: list[dict]) -> list[Response]:
        """Responses from dicts of this factory's fields, in order, in one transaction.

        Each item and participant the specs name is looked up (and the participant enrolled)
        once for the whole list, not once per row: a few hundred rows cost three queries
        each that way, a tenth of the time a test spent building its answers. The pages are
        written as a batch's are (``create_assignment``'s ``position`` and ``takes_slot``):
        the participants' next positions read at once (``next_positions``), the items' slots
        taken at once (``take_slots``, in item order)."""
        items: dict[str, Item] = {}
        participants: dict[tuple[str, str], Participant] = {}
        rows = []
        for spec in specs:
            fields = dict(spec)
            if isinstance(fields.get("item"), str):
                if fields["item"] not in items:
                    items[fields["item"]] = Item.objects.get(study=study, external_id=fields["item"])
                fields["item"] = items[fields["item"]]
            if isinstance(fields.get("participant"), str):
                key = (fields.get("source", cls.source), fields["participant"])
                if key not in participants:
                    participants[key] = participant_named(study, key[1], key[0])
                fields["participant"] = participants[key]
                fields["enrolled"] = True  # by participant_named
            rows.append(fields)
        with transaction.atomic():  # the services lock rows, as on the site
            positions = next_positions(study, {fields["participant"].pk for fields in rows})
            take_slots(Counter(fields["item"].pk for fields in rows))
            return [
                cls(
                    study=study, position=next(positions[fields["participant"].pk]), slot_taken=True, **fields
                )
                for fields in rows
            ]

    @classmethod
    def _create(
        cls,
        model_class,
        *,
        study: Study,
        item,
        participant,
        seconds,
        source,
        enrolled,
        position,
        slot_taken,
        **fields,
    ) -> Response:
        if isinstance(item, str):
            item = Item.objects.get(study=study, external_id=item)
        if isinstance(participant, str):
            participant, enrolled = participant_named(study, participant, source), True
        # the services lock rows, as on the site; a batch's rows share its transaction
        with transaction.atomic(savepoint=not slot_taken):
            return _store_answered(
                study,
                item,
                participant,
                seconds=seconds,
                enrolled=enrolled,
                position=position,
                takes_slot=not slot_taken,
                **fields,
            )


def _store_answered(
    study: Study,
    item: Item,
    participant: Participant,
    *,
    answer: dict,
    points: float | None,
    correct: bool | None,
    score_details: dict,
    display_order: dict,
    flagged: bool,
    answered_at: datetime,
    seconds: float | None,
    enrolled: bool = False,
    position: int | None = None,
    takes_slot: bool = True,
) -> Response:
    """Hand ``item`` to ``participant``, store the answer through the submission service and
    count it on their enrollment (enrolled if they were not, unless ``enrolled`` says they
    are: a few hundred rows spent a query each on an enrollment already there), with the
    dictated score. ``position`` and ``takes_slot`` as ``create_assignment`` takes them (a
    batch's own positions; its slots taken beforehand)."""
    shown_at = answered_at - timedelta(seconds=seconds) if seconds is not None else None
    assignment = create_assignment(
        study=study,
        item=item,
        participant=participant,
        now=shown_at or answered_at,
        state=display_order,
        expires_at=answered_at,
        shown_at=shown_at,
        position=position,
        takes_slot=takes_slot,
    )
    response = store_response(
        assignment=assignment, answer=answer, shown_at=shown_at, answered_at=answered_at
    )
    unknown_duration = {"shown_at": None, "duration_seconds": None} if shown_at is None else {}
    dictated = {"points": points, "correct": correct, "score_details": score_details, "flagged": flagged}
    Response.objects.filter(pk=response.pk).update(**dictated, **unknown_duration)
    response.refresh_from_db()
    if not enrolled:
        _enrolled(participant, study)
    check = response.is_attention_check
    count_answers(
        participant_id=participant.pk,
        study_id=study.pk,
        answers=1,
        points=response.points or 0,
        passed=int(check and response.correct is True),
        failed=int(check and response.correct is not True),
    )
    return response
