"""The participant's hot path and the researchers' participants page read a fixed number of queries.

Each test builds the same situation with N and with 3N rows (items, earlier answers, other
participants) and counts the queries of one request: a query per row makes the counts differ.
The participant and game steps are held to today's counts exactly and to one commit each
(sessions come from Redis, no expiry sweep, the page's shown time set when it is handed
out): a new query or commit on the hot path is a conscious change of the bound. Savepoints
count as queries here; on a real server they are the transaction's BEGIN and COMMIT.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Participant, Study
from annotation.services.access import is_researcher
from annotation.services.authoring.invitations import researcher_join
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.factories import researcher_user
from tests.game_helpers import answer, boundary_study_file, guess, play_via_services, reveal, round_id
from tests.helpers.flow import answer_pages
from tests.queries import assert_flat, count_queries, count_queries_and_commits

pytestmark = pytest.mark.django_db

N = 3
SIZES = (N, 3 * N)


def client_of(participant: Participant) -> Client:
    """A browser that the site already knows as ``participant`` (as after the entry page)."""
    client = Client()
    session = client.session
    session["participant_id"] = participant.pk
    session.save()
    return client


SUPPORTS = {"label": "supports", "evidence": [0]}


def claim_study_with_history(size: int, enrolled) -> tuple[Study, Participant]:
    """``size`` other participants who answered, and one who answered ``size`` pages already."""
    data = claim_study_file(
        slug=f"hot-{size}", items=4 * size, annotations_per_item=size + 2, items_per_session=4 * size
    )
    study = load_study_file(data).study
    for _ in range(size):
        answer_pages(study, enrolled(study), SUPPORTS, 1)
    participant = enrolled(study)
    answer_pages(study, participant, SUPPORTS, size)
    return study, participant


def task_and_submit_queries(size: int, enrolled) -> tuple[int, int]:
    """Queries of the task page that hands out the next page, and of submitting that page;
    each request commits once."""
    study, participant = claim_study_with_history(size, enrolled)
    client = client_of(participant)
    task, task_commits, page = count_queries_and_commits(lambda: client.get(f"/s/{study.slug}/task/"))
    action = re.search(r'action="(/s/[\w-]+/a/\d+/)"', page.content.decode()).group(1)
    form = {"label": "supports", "evidence": ["0"]}
    submit, submit_commits, _ = count_queries_and_commits(lambda: client.post(action, form), status=302)
    assert (task_commits, submit_commits) == (1, 1)
    return task, submit


def test_task_page_and_submit_do_not_query_per_row(enrolled):
    measured = {size: task_and_submit_queries(size, enrolled) for size in SIZES}
    # task: the gate (one query: the enrollment with its participant and study), then in
    # one transaction (BEGIN and COMMIT: two savepoints here) the enrollment locked and
    # then read with the live assignment and the last position (two statements sent in
    # one round trip, a pipeline: counted as two here), the item pick, locked (the
    # wrap-around inside that statement), then the new assignment and its item's slot taken
    # (two statements, one round trip). On a server, where the request's transaction is the
    # step's own, one more in the first trip: the keys checked at each statement from then
    # on (``sql_rows.keys_checked_at_each_statement``; here, inside the test's transaction,
    # they stay deferred).
    assert_flat({size: task for size, (task, _) in measured.items()}, at_most=8)
    # submit: the gate (one: the enrollment, the page and its item), then the page locked
    # while open (on a server, with the keys checked at each statement in the same trip),
    # the response and then the page marked answered (one round trip), the enrollment's
    # count; in a study that closes when full, one more: whether this answer completed its
    # item (the quota's transition, ``capacity.close_if_quota_reached``).
    assert_flat({size: submit for size, (_, submit) in measured.items()}, at_most=8)


def round_step_queries(size: int, enrolled) -> dict[str, int]:
    """Queries of each step of a round, after ``size`` rounds by others and by this player."""
    slug = f"game-{size}"
    study = load_study_file(boundary_study_file(slug=slug, items=4 * size)).study
    for _ in range(size):
        play_via_services(enrolled(study), study, lambda boundary, length: boundary)
    participant = enrolled(study)
    for _ in range(size):
        play_via_services(participant, study, lambda boundary, length: length)
    client = client_of(participant)
    counts, commits = {}, {}
    counts["task"], commits["task"], page = count_queries_and_commits(lambda: client.get(f"/s/{slug}/task/"))
    number = round_id(page.content.decode())
    steps = {
        "reveal": lambda: reveal(client, slug, number, 1),
        "guess": lambda: guess(client, slug, number, 1),
        "answer": lambda: answer(client, slug, number),
    }
    for step, request in steps.items():
        counts[step], commits[step], _ = count_queries_and_commits(request)
    assert set(commits.values()) == {1}, commits
    return counts


def test_every_round_step_reads_a_fixed_number_of_queries(enrolled):
    measured = {size: round_step_queries(size, enrolled) for size in SIZES}
    # reveal: the gate (1) and one conditional UPDATE of the round's row; guess: the gate
    # and the row locked and updated. Each fragment is built from that row and the gate's
    # enrollment, without reading anything again. task: the survey's task page and the
    # player's totals; answer: the survey's submit, the player's two rows created where
    # missing and locked (an insert that passes over those there, a locking read), their
    # new totals (one update) and the round's order on the response, and the totals for
    # the result.
    bounds = {"task": 9, "reveal": 2, "guess": 5, "answer": 12}
    for step, bound in bounds.items():
        per_size = {size: counts[step] for size, counts in measured.items()}
        assert_flat(per_size, at_most=bound)


def test_researchers_participants_page_does_not_query_per_participant(enrolled, django_user_model):
    researcher = researcher_user("rita", password="pw")
    client = Client()
    client.force_login(researcher)
    counts = {}
    for size in SIZES:
        data = claim_study_file(slug=f"people-{size}", items=2, annotations_per_item=3 * size)
        study = load_study_file(data, owner=researcher).study
        for number in range(size):
            person = enrolled(study, source="prolific", platform_worker_id=f"P{size}-{number}")
            answer_pages(study, person, SUPPORTS, 2)
        url = f"/research/s/{study.slug}/participants/"
        counts[size], page = count_queries(lambda: client.get(url))  # noqa: B023 - called at once
        assert page.content.decode().count("<tr") == size + 1  # a header and a row per participant
    assert_flat(counts, at_most=12)  # 8 today


def test_a_one_trip_answer_reads_the_gates_rows_once(enrolled):
    """The page a one-trip answer leads to is gated on the rows the answer's gate read, as the
    answer left them (its count: the page number), not on a second read of them."""
    study, participant = claim_study_with_history(N, enrolled)
    client = client_of(participant)
    page = client.get(f"/s/{study.slug}/task/").content.decode()
    assert f"Page {N + 1} of" in page
    action = re.search(r'action="(/s/[\w-]+/a/\d+/)"', page).group(1)
    form = {"label": "supports", "evidence": ["0"]}
    with CaptureQueriesContext(connection) as captured:
        answered = client.post(action, form, HTTP_HX_REQUEST="true")
    assert answered.status_code == 200 and answered["HX-Push-Url"] == f"/s/{study.slug}/task/"
    assert f"Page {N + 2} of" in answered.content.decode()
    gate = [
        query
        for query in captured
        if 'JOIN "annotation_participant" p ON p.id = e.participant_id' in query["sql"]
    ]
    assert len(gate) == 1


def test_a_research_page_asks_once_whether_its_user_is_a_researcher(example_study_file):
    """The page's decorator, the study list, the role and the top bar all ask
    ``is_researcher``; the group membership is read once per request."""
    owner = researcher_user("member")  # a researcher by the group, not staff
    study = load_study_file(example_study_file("likert"), owner=owner).study
    client = Client()
    client.force_login(owner)
    for url in ("/research/", f"/research/s/{study.slug}/"):
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        asked = [q["sql"] for q in captured.captured_queries if '"auth_user_groups"' in q["sql"]]
        assert len(asked) == 1, (url, asked)


def test_joining_the_researchers_makes_the_same_user_object_a_researcher():
    user = get_user_model().objects.create_user("joiner")
    assert not is_researcher(user)
    assert researcher_join(user)
    assert is_researcher(user)
