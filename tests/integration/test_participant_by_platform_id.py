"""One participant per (source, platform id), however many first arrivals race for it."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from annotation.models import Participant
from annotation.services.participation.participants import participant_by_platform_id
from tests.threads import run_in_threads

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_first_arrivals_at_once_get_one_participant():
    """The second arrival reads no row, then its insert waits on the first one's uncommitted
    row; once that commits, the second gets the same participant instead of an error."""
    inserted, commit = threading.Event(), threading.Event()
    got: dict[str, int] = {}

    def first() -> None:
        try:
            with transaction.atomic():
                got["first"] = participant_by_platform_id(Participant.Source.PROLIFIC, "PID-RACE").pk
                inserted.set()
                commit.wait(10)
        finally:
            connection.close()

    def second() -> None:
        try:
            inserted.wait(10)
            # An outer transaction (an import's) goes on after the lost race.
            with transaction.atomic():
                got["second"] = participant_by_platform_id(Participant.Source.PROLIFIC, "PID-RACE").pk
                got["after"] = Participant.objects.count()
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    inserted.wait(10)
    threads[1].join(0.5)  # the second is now waiting on the first one's insert
    commit.set()
    for thread in threads:
        thread.join(20)
    assert got["first"] == got["second"] and got["after"] == 1
    assert Participant.objects.filter(platform_worker_id="PID-RACE").count() == 1


def test_many_first_arrivals_of_many_ids_get_one_participant_each():
    names = [f"W{i}" for i in range(6)] * 6
    seen: dict[str, set[int]] = {}
    lock = threading.Lock()

    def arrive(mine: list) -> None:
        for name in mine:
            pk = participant_by_platform_id(Participant.Source.MTURK, name).pk
            with lock:
                seen.setdefault(name, set()).add(pk)

    run_in_threads(arrive, names, threads=6)
    assert all(len(pks) == 1 for pks in seen.values()) and len(seen) == 6
    assert Participant.objects.filter(source=Participant.Source.MTURK).count() == 6


def test_defaults_are_written_on_first_use_only():
    definition = {"kind": "llm", "model": "m"}
    model = Participant.Source.MODEL
    made = participant_by_platform_id(model, "rater-1", defaults={"definition": definition})
    again = participant_by_platform_id(model, "rater-1", defaults={"definition": {}})
    assert made.pk == again.pk and again.definition == definition
