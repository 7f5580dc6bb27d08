"""assign_next_item's rules: never twice, never over the target, least filled first, expiry."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from annotation.models import Assignment, Item
from annotation.services.participation.assignment import (
    assign_next_item,
    pick_draw,
    release_expired_assignments,
    release_participant_assignments,
)
from annotation.services.participation.submission import (
    SubmissionClosed,
    store_answer_given_elsewhere,
    submit_response,
)
from tests.helpers.flow import answer_pages
from tests.helpers.pick_plan import plan_of_the_pick

pytestmark = pytest.mark.django_db

ANSWER = {"label": "neutral", "evidence": []}


def test_participant_never_gets_an_item_twice_and_session_length_holds(make_claim_study, enrolled):
    study = make_claim_study(items=6, items_per_session=4)
    seen = answer_pages(study, enrolled(study), ANSWER)
    assert len(seen) == 4 and len(set(seen)) == 4


def test_item_target_is_never_exceeded(make_claim_study, enrolled):
    study = make_claim_study(items=3, annotations_per_item=2, items_per_session=3)
    for _ in range(5):
        answer_pages(study, enrolled(study), ANSWER)
    counts = Item.objects.filter(study=study).values_list("slots_taken", flat=True)
    assert list(counts) == [2, 2, 2]
    assert Assignment.objects.filter(study=study, status="answered").count() == 6


def test_least_filled_items_come_first(make_claim_study, enrolled):
    study = make_claim_study(items=4, annotations_per_item=3, items_per_session=1)
    firsts = [assign_next_item(participant=enrolled(study), study=study).item for _ in range(4)]
    assert len(set(firsts)) == 4  # each item once before any item a second time
    fifth = assign_next_item(participant=enrolled(study), study=study)
    assert fifth.item in firsts and Item.objects.get(pk=fifth.item.pk).slots_taken == 2


def test_the_page_is_shown_from_when_it_is_handed_out(make_claim_study, enrolled):
    study = make_claim_study()
    participant = enrolled(study)
    assignment = assign_next_item(participant=participant, study=study)
    assert assignment.shown_at == assignment.assigned_at
    assert Assignment.objects.get(pk=assignment.pk).shown_at == assignment.assigned_at


def test_the_pick_order_is_drawn_per_participant_and_page(make_claim_study, enrolled):
    study = make_claim_study(items=2)
    first, second = enrolled(study), enrolled(study)
    assert pick_draw(study, first, 1) == pick_draw(study, first, 1)  # reproducible
    assert len({pick_draw(study, first, 1), pick_draw(study, second, 1), pick_draw(study, first, 2)}) == 3


def test_resume_returns_the_same_assignment(make_claim_study, enrolled):
    study = make_claim_study()
    participant = enrolled(study)
    first = assign_next_item(participant=participant, study=study)
    assert assign_next_item(participant=participant, study=study) == first


def test_a_live_page_below_a_newer_answered_one_is_resumed(make_claim_study, enrolled):
    """The resume looks below the newest page when that one is not live: an answer stored
    after the page was handed out (an import, a guest's answers moved to the account) takes
    a later position, and the page the participant holds is still theirs to answer."""
    study = make_claim_study(items=4)
    participant = enrolled(study)
    held = assign_next_item(participant=participant, study=study)
    later = Item.objects.filter(study=study).exclude(pk=held.item_id).first()
    store_answer_given_elsewhere(
        study=study, participant=participant, item=later, answer=ANSWER, state={}, answered_at=timezone.now()
    )
    assert Assignment.objects.filter(participant=participant, study=study).latest("position").item == later
    assert assign_next_item(participant=participant, study=study) == held
    assert Assignment.objects.filter(participant=participant, study=study, status="assigned").count() == 1


def test_expired_assignment_is_released_lazily_and_its_slot_reused(make_claim_study, enrolled):
    study = make_claim_study(items=1, annotations_per_item=1, items_per_session=1)
    slow, other = enrolled(study), enrolled(study)
    held = assign_next_item(participant=slow, study=study)
    assert assign_next_item(participant=other, study=study) is None
    Assignment.objects.filter(pk=held.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    got = assign_next_item(participant=other, study=study)
    assert got is not None and got.item == held.item
    held.refresh_from_db()
    assert held.status == "expired"
    # The slow participant never gets the item again, even though they lost it.
    assert assign_next_item(participant=slow, study=study) is None


def test_periodic_release_counts_and_frees_slots(make_claim_study, enrolled):
    study = make_claim_study(items=2, annotations_per_item=1, items_per_session=1)
    for _ in range(2):
        assign_next_item(participant=enrolled(study), study=study)
    Assignment.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    assert release_expired_assignments() == 2
    assert set(Item.objects.values_list("slots_taken", flat=True)) == {0}
    assert release_expired_assignments() == 0


def test_answered_assignment_is_not_expired(make_claim_study, enrolled):
    study = make_claim_study(items=1, annotations_per_item=1)
    assignment = assign_next_item(participant=enrolled(study), study=study)
    submit_response(assignment=assignment, answer=ANSWER)
    Assignment.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    assert release_expired_assignments() == 0
    assert Item.objects.get().slots_taken == 1


def test_release_participant_assignments(make_claim_study, enrolled):
    study = make_claim_study(items=1, annotations_per_item=1)
    participant = enrolled(study)
    assign_next_item(participant=participant, study=study)
    assert release_participant_assignments(participant=participant, study=study) == 1
    assert Assignment.objects.get().status == "released"
    assert Item.objects.get().slots_taken == 0


def test_attention_checks_are_interleaved_and_not_budgeted(make_claim_study, enrolled):
    study = make_claim_study(items=8, attention=2, items_per_session=5, attention_check_rate=0.4)
    for _ in range(3):
        participant = enrolled(study)
        kinds = []
        while (a := assign_next_item(participant=participant, study=study)) is not None:
            kinds.append(a.item.is_attention_check)
            answer = {"label": "neutral", "evidence": []}
            submit_response(assignment=a, answer=answer)
        assert kinds.count(True) == 2 and not kinds[0]


def test_the_item_pick_reads_an_index_in_order_and_sorts_nothing(make_claim_study, enrolled):
    """The pick costs the same in a study of any size: PostgreSQL walks the pick index from
    the participant's draw and stops at the first free item, with no Sort over the items."""
    study = make_claim_study(items=1000, annotations_per_item=3, items_per_session=5)
    answer_pages(study, enrolled(study), ANSWER, 2)  # some items filled, some had
    participant = enrolled(study)
    answer_pages(study, participant, ANSWER, 2)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_item")
        cursor.execute("ANALYZE annotation_assignment")
    plan = plan_of_the_pick(participant, study)
    assert "Sort" not in plan, plan
    assert "LockRows" in plan and "item_pick_order" in plan, plan


def test_a_page_request_does_not_sweep_other_participants_expired_pages(make_claim_study, enrolled):
    """The sweep runs periodically (beat, or ``releaseexpired``), not on every page; the
    expired page is refused at its submit all the same."""
    study = make_claim_study(items=4, annotations_per_item=1, items_per_session=1)
    slow, other = enrolled(study), enrolled(study)
    held = assign_next_item(participant=slow, study=study)
    Assignment.objects.filter(pk=held.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert assign_next_item(participant=other, study=study) is not None  # items were still open
    assert Assignment.objects.get(pk=held.pk).status == "assigned"
    with pytest.raises(SubmissionClosed):
        submit_response(assignment=Assignment.objects.get(pk=held.pk), answer=ANSWER)
    out = StringIO()
    call_command("releaseexpired", stdout=out)
    assert "Released 1 " in out.getvalue()
    assert Assignment.objects.get(pk=held.pk).status == "expired"
    assert Item.objects.get(pk=held.item_id).slots_taken == 0
