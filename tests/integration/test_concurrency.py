"""Many participants at once never overfill an item nor get an item twice (PostgreSQL)."""

import threading
from collections import Counter

import pytest
from django.db import connection

from annotation.models import Assignment, Item, Participant, Response
from annotation.services.assignment import assign_next_item
from annotation.services.participants import enroll, give_consent
from annotation.services.submission import submit_response
from tests.conftest import claim_study_file

ANSWER = {"label": "neutral", "evidence": []}
THREADS = 8
PARTICIPANTS_PER_THREAD = 3


@pytest.mark.django_db(transaction=True)
def test_parallel_assign_and_submit_respect_targets():
    from annotation.services.studies import load_study_file

    study = load_study_file(claim_study_file(items=10, annotations_per_item=3, items_per_session=5)).study
    participants = []
    for _ in range(THREADS * PARTICIPANTS_PER_THREAD):
        participant = Participant.objects.create()
        give_consent(enroll(participant=participant, study=study))
        participants.append(participant)
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def work(mine: list[Participant]) -> None:
        try:
            start.wait()
            for participant in mine:
                while (assignment := assign_next_item(participant=participant, study=study)) is not None:
                    submit_response(assignment=assignment, answer=ANSWER)
                    submit_response(assignment=assignment, answer=ANSWER)  # a double click
        except BaseException as exc:  # reported below, with the thread's traceback
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(participants[i::THREADS],)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
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
