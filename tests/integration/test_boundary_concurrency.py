"""Many players on one category at once (threads on PostgreSQL): nobody gets a passage
twice, no passage gets more players than it wants, and every round is counted once."""

from collections import Counter

import pytest

from annotation.models import Assignment, Item, Participant, PlayerStats, Response
from annotation.services.authoring.studies import load_study_file
from tests.game_helpers import boundary_study_file, play_via_services
from tests.threads import consented_participants, run_in_threads

THREADS = 8
PLAYERS_PER_THREAD = 3
ITEMS, TARGET = 12, 3


def one_late(boundary, length):
    return min(boundary + 1, length)


@pytest.mark.django_db(transaction=True)
def test_parallel_players_respect_targets_and_never_repeat_a_passage():
    study = load_study_file(
        boundary_study_file(slug="rush", items=ITEMS, annotations_per_item=TARGET, items_per_session=ITEMS)
    ).study
    players = consented_participants(study, THREADS * PLAYERS_PER_THREAD)

    def work(mine: list[Participant]) -> None:
        for _ in range(ITEMS):  # round-robin: each player takes one round at a time
            for participant in mine:
                play_via_services(participant, study, one_late)

    run_in_threads(work, players, THREADS)
    per_item = Counter(Response.objects.filter(study=study).values_list("item_id", flat=True))
    assert sum(per_item.values()) == ITEMS * TARGET  # every slot filled, none overfilled
    assert max(per_item.values()) == TARGET
    pairs = list(Response.objects.values_list("participant_id", "item_id"))
    assert len(pairs) == len(set(pairs))
    for item in Item.objects.filter(study=study):
        live = Assignment.objects.filter(item=item, status__in=["assigned", "answered"]).count()
        assert item.slots_taken == live
    for participant in players:
        rounds = Response.objects.filter(participant=participant)
        orders = sorted(r.score_details["order"] for r in rounds)
        assert orders == list(range(1, len(orders) + 1))
        if orders:
            totals = PlayerStats.objects.get(participant=participant, category="")
            assert totals.played == len(orders) and totals.points_total == 4 * len(orders)
