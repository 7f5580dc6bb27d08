"""Many participants at once never overfill an item nor get an item twice (PostgreSQL)."""

from collections import Counter

import pytest

from annotation.models import Assignment, Item, Participant, Response
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from tests.conftest import claim_study_file
from tests.threads import consented_participants, run_in_threads

ANSWER = {"label": "neutral", "evidence": []}
THREADS = 8
PARTICIPANTS_PER_THREAD = 3


@pytest.mark.django_db(transaction=True)
def test_parallel_assign_and_submit_respect_targets():
    from annotation.services.authoring.studies import load_study_file

    study = load_study_file(claim_study_file(items=10, annotations_per_item=3, items_per_session=5)).study
    participants = consented_participants(study, THREADS * PARTICIPANTS_PER_THREAD)

    def work(mine: list[Participant]) -> None:
        for participant in mine:
            while (assignment := assign_next_item(participant=participant, study=study)) is not None:
                submit_response(assignment=assignment, answer=ANSWER)
                submit_response(assignment=assignment, answer=ANSWER)  # a double click

    run_in_threads(work, participants, THREADS)
    per_item = Counter(Response.objects.filter(study=study).values_list("item_id", flat=True))
    assert per_item and max(per_item.values()) <= 3
    assert sum(per_item.values()) == 30  # every slot filled: 24 participants want more than 30
    pairs = list(Response.objects.values_list("participant_id", "item_id"))
    assert len(pairs) == len(set(pairs))
    assert Response.objects.count() == Assignment.objects.filter(status="answered").count()
    for item in Item.objects.filter(study=study):
        assert (
            item.slots_taken
            == Assignment.objects.filter(item=item, status__in=["assigned", "answered"]).count()
        )


@pytest.mark.django_db(transaction=True)
def test_parallel_first_pages_hold_every_slot_once():
    """More participants than slots ask for their first page at once: the one-statement
    pick (lock, wrap-around, slot) hands each slot out once and fills every one."""
    from annotation.services.authoring.studies import load_study_file

    study = load_study_file(claim_study_file(items=6, annotations_per_item=2, items_per_session=1)).study
    participants = consented_participants(study, 16)  # 12 slots

    def work(mine: list[Participant]) -> None:
        for participant in mine:
            assign_next_item(participant=participant, study=study)
            assign_next_item(participant=participant, study=study)  # a reload: the same page

    run_in_threads(work, participants, THREADS)
    held = list(Assignment.objects.filter(study=study).values_list("participant_id", "item_id", "status"))
    assert len(held) == 12 and {status for _, _, status in held} == {"assigned"}
    assert len({participant for participant, _, _ in held}) == 12  # one page per participant
    per_item = Counter(item for _, item, _ in held)
    for item in Item.objects.filter(study=study):
        assert item.slots_taken == per_item[item.pk] == 2


@pytest.mark.django_db(transaction=True)
def test_two_tabs_asking_at_once_get_the_same_page():
    from annotation.services.authoring.studies import load_study_file

    study = load_study_file(claim_study_file(items=6, annotations_per_item=2, items_per_session=3)).study
    participant = consented_participants(study, 1)[0]
    pages: list[int] = []

    def work(mine: list[Participant]) -> None:
        pages.append(assign_next_item(participant=mine[0], study=study).pk)

    run_in_threads(work, [participant] * THREADS, THREADS)
    assert len(set(pages)) == 1
    assert Assignment.objects.filter(participant=participant).count() == 1
    assert sum(Item.objects.filter(study=study).values_list("slots_taken", flat=True)) == 1
