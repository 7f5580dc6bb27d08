"""Running test work on several threads at once, each with its own database connection."""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.db import connection

from annotation.models import Participant, Study
from tests.factories import ParticipantFactory


def consented_participants(study: Study, count: int) -> list[Participant]:
    return ParticipantFactory.create_batch(count, enrolled_in=study)


def run_in_threads(work: Callable[[list], None], people: list, threads: int, timeout: float = 120) -> None:
    """Split ``people`` over ``threads`` threads that start together; re-raise any error."""
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def run(mine: list) -> None:
        try:
            start.wait()
            work(mine)
        except BaseException as exc:  # reported to the test below, with its traceback
            errors.append(exc)
        finally:
            connection.close()

    workers = [threading.Thread(target=run, args=(people[i::threads],)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=timeout)
    assert not errors, errors
