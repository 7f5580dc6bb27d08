"""Two confirmations of one platform action posted at once, through HTTP, each request on
its own thread and database connection, against the local stand-in of Prolific
(``tests/helpers/fake_prolific.py``); the jobs run in the requests (eager Celery).

- the bonus cap holds: two bonuses that fit one at a time but not together pay one
  (red-team round 4, T2);
- two runs of the same file create one bulk bonus, and no bulk bonus is left created and
  unpaid without being listed (T2);
- two review confirmations send each approval once (T6).

Where the interleaving matters the test forces it instead of hoping for it: a table lock
held by the test, or the stand-in holding a call unanswered until the other run is done.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from django.db import connection, connections
from django.test import Client

from annotation.models import Job, PlatformBonus, PlatformStudy
from annotation.platforms.prolific.calls import unpaid_batches
from tests.helpers.platforms import GOOD, crowd_participant

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_S = 60  # the most any step waits for the other thread (a failure, never a timing)


@pytest.fixture
def study_on_prolific(crowd_study, owner, fake_prolific, settings):
    """``crowd_study``, owned by ``owner``, on the Prolific stand-in with a bonus cap of 2.00 and
    one finished participant; the client waits for held calls longer than any step here."""
    settings.PLATFORM_API_TIMEOUT_S = WAIT_S + 30
    study = crowd_study
    study.owner = owner
    study.save(update_fields=["owner"])
    PlatformStudy.objects.update_or_create(
        study=study, defaults={"prolific_study_id": "st-1", "bonus_cap_cents": 200}
    )
    crowd_participant(study, "pid-a", GOOD)
    fake_prolific.add_submission("st-1", "pid-a")
    return study


def confirm(owner, url: str, data: dict) -> int:
    client = Client()
    client.force_login(owner)
    return client.post(url, {**data, "confirm": "yes"}).status_code


def race(posts: list[Callable[[], int]], *, release: Callable[[], bool], then: Callable[[], None]) -> list:
    """Start the posts together on their own threads; once ``release()`` says so (or one
    post has finished), call ``then`` (which lets the held ones go on); their statuses."""
    statuses: list = [None] * len(posts)
    start = threading.Barrier(len(posts))

    def run(index: int) -> None:
        try:
            start.wait()
            statuses[index] = posts[index]()
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(posts))]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + WAIT_S
    while not release() and all(t.is_alive() for t in threads) and time.monotonic() < deadline:
        time.sleep(0.02)
    then()
    for thread in threads:
        thread.join(timeout=WAIT_S)
    return statuses


def waiting_on_locks() -> int:
    """Backends of this test database waiting for a lock (the racing requests)."""
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def test_two_bonuses_confirmed_at_once_never_pass_the_cap(owner, study_on_prolific, fake_prolific):
    """Each 1.50 fits the cap of 2.00 alone, not both. The test holds a lock that stops any
    bonus row being written until both runs are past the point where one could check the
    cap before the other has written its row: without the cap's lock both pay."""
    url = f"/research/s/{study_on_prolific.slug}/platforms/prolific/bonus/"
    posts = [
        lambda r=reason: confirm(owner, url, {"bonuses": f"pid-a,1.50,{r}\n"}) for reason in ("one", "two")
    ]
    locker = connections.create_connection("default")
    locker.set_autocommit(False)
    with locker.cursor() as cursor:
        cursor.execute("LOCK TABLE annotation_platformbonus IN SHARE MODE")

    def unlock() -> None:
        locker.rollback()
        locker.close()

    statuses = race(posts, release=lambda: waiting_on_locks() >= 2, then=unlock)

    assert statuses == [302, 302]
    paid = sum(PlatformBonus.objects.filter(state="paid").values_list("amount_cents", flat=True))
    assert paid == 150 and len(fake_prolific.payments) == 1
    jobs = Job.objects.filter(kind="prolific_bonus").order_by("id")
    assert sorted(job.status for job in jobs) == ["done", "failed"]
    assert "cap of 2.00" in next(job.error for job in jobs if job.status == "failed")
    assert len(fake_prolific.bonuses) == 1 and unpaid_batches(study_on_prolific) == []


def test_the_same_bonuses_confirmed_twice_at_once_make_one_bulk_bonus_paid_once(
    owner, study_on_prolific, fake_prolific
):
    """The first run's create call is held on Prolific's side until the second run has
    finished: the second must find the bonus claimed and create no bulk bonus of its own."""
    url = f"/research/s/{study_on_prolific.slug}/platforms/prolific/bonus/"
    posts = [lambda: confirm(owner, url, {"bonuses": "pid-a,1.50,thanks\n"})] * 2
    fake_prolific.hold = lambda path: path == "/api/v1/submissions/bonus-payments/"

    statuses = race(
        posts,
        release=lambda: fake_prolific.posts_to("/submissions/bonus-payments/") >= 2,
        then=fake_prolific.release.set,
    )

    assert statuses == [302, 302]
    assert len(fake_prolific.bonuses) == 1 and len(fake_prolific.payments) == 1
    assert list(PlatformBonus.objects.values_list("state", flat=True)) == ["paid"]
    assert unpaid_batches(study_on_prolific) == []


def test_two_reviews_confirmed_at_once_send_one_approval(owner, study_on_prolific, fake_prolific):
    """The first run's approval is held on Prolific's side until the second run has finished
    (or sent its own): one transition call reaches Prolific, and neither job fails."""
    url = f"/research/s/{study_on_prolific.slug}/platforms/prolific/review/"
    posts = [lambda: confirm(owner, url, {})] * 2
    fake_prolific.hold = lambda path: path.endswith("/transition/")

    statuses = race(
        posts, release=lambda: fake_prolific.posts_to("/transition/") >= 2, then=fake_prolific.release.set
    )

    assert statuses == [302, 302]
    assert fake_prolific.posts_to("/transition/") == 1 and fake_prolific.status_of("pid-a") == "APPROVED"
    assert sorted(Job.objects.filter(kind="prolific_review").values_list("status", flat=True)) == [
        "done",
        "done",
    ]
