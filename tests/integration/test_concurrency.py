"""Many participants at once never overfill an item nor get an item twice (PostgreSQL)."""

from collections import Counter

import pytest

from annotation.models import Assignment, Item, Participant, Response
from annotation.services.assignment import assign_next_item
from annotation.services.submission import submit_response
from tests.conftest import claim_study_file
from tests.threads import consented_participants, run_in_threads

ANSWER = {"label": "neutral", "evidence": []}
THREADS = 8
PARTICIPANTS_PER_THREAD = 3


@pytest.mark.django_db(transaction=True)
def test_parallel_assign_and_submit_respect_targets():
    from annotation.services.studies import load_study_file

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
