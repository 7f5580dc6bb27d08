"""Studies and responses written straight through the ORM, for the reports tests.

The kinds other than ``claim`` are built on other branches; these helpers store items and
responses in exactly the shapes the shared contracts give (payload, answer, points,
score_details, display order), so the reports can be checked before those kinds land.
"""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Max
from django.utils import timezone

from annotation.models import Assignment, Enrollment, Item, Participant, Response, Study


def make_study(kind: str, *, slug: str, config: dict | None = None, owner=None, **fields) -> Study:
    defaults = {"title": f"{kind} study", "status": Study.Status.LIVE, "annotations_per_item": 3}
    return Study.objects.create(
        slug=slug, kind=kind, config=config or {}, owner=owner, **{**defaults, **fields}
    )


def add_items(study: Study, items: list[dict]) -> dict[str, Item]:
    """``items``: dicts with external_id, payload and optional provenance, gold, attention_check."""
    created = Item.objects.bulk_create(
        Item(
            study=study,
            external_id=spec["external_id"],
            payload=spec["payload"],
            provenance=spec.get("provenance", {}),
            gold=spec.get("gold"),
            is_attention_check=spec.get("attention_check", False),
        )
        for spec in items
    )
    return {item.external_id: item for item in created}


def add_responses(
    study: Study, responses: list[dict], *, source: str = Participant.Source.LAB
) -> list[Response]:
    """Store answered assignments and their responses in bulk.

    Each dict: ``participant`` (a name), ``item`` (external id), ``answer``; optionally
    ``points``, ``correct``, ``score_details``, ``display_order``, ``flagged``, ``seconds``,
    ``source`` (participant source) and ``answered_at``.
    """
    items = {item.external_id: item for item in Item.objects.filter(study=study)}
    participants = _participants(study, responses, source)
    start = timezone.now() - timedelta(hours=1)
    positions = {
        name: Assignment.objects.filter(study=study, participant=participant).aggregate(last=Max("position"))[
            "last"
        ]
        or 0
        for name, participant in participants.items()
    }
    assignments, rows = [], []
    for index, spec in enumerate(responses):
        item = items[spec["item"]]
        participant = participants[spec["participant"]]
        positions[spec["participant"]] = positions.get(spec["participant"], 0) + 1
        answered = spec.get("answered_at") or start + timedelta(seconds=index)
        seconds = spec.get("seconds", 20.0)
        shown = answered - timedelta(seconds=seconds) if seconds is not None else None
        state = spec.get("display_order", {})
        assignments.append(
            Assignment(
                study=study,
                item=item,
                participant=participant,
                position=positions[spec["participant"]],
                status=Assignment.Status.ANSWERED,
                state=state,
                assigned_at=shown or answered,
                expires_at=answered,
                shown_at=shown,
                answered_at=answered,
            )
        )
        rows.append((spec, item, participant, state, shown, answered, seconds))
    Assignment.objects.bulk_create(assignments)
    return Response.objects.bulk_create(
        Response(
            assignment=assignment,
            study=study,
            item=item,
            participant=participant,
            answer=spec["answer"],
            points=spec.get("points"),
            correct=spec.get("correct"),
            score_details=spec.get("score_details", {}),
            display_order=state,
            is_attention_check=item.is_attention_check,
            flagged=spec.get("flagged", False),
            shown_at=shown,
            answered_at=answered,
            duration_seconds=seconds,
        )
        for assignment, (spec, item, participant, state, shown, answered, seconds) in zip(
            assignments, rows, strict=True
        )
    )


def _participants(study: Study, responses: list[dict], source: str) -> dict[str, Participant]:
    found = {}
    for spec in responses:
        name = spec["participant"]
        if name in found:
            continue
        participant, _ = Participant.objects.get_or_create(
            source=spec.get("source", source), platform_worker_id=name
        )
        Enrollment.objects.get_or_create(
            participant=participant, study=study, defaults={"status": Enrollment.Status.COMPLETED}
        )
        found[name] = participant
    return found
