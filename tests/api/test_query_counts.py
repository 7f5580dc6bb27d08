"""The API's list endpoints read a fixed number of queries, whatever the number of rows.

Each endpoint is counted with N and with 3N rows behind it (studies, items, responses,
participants, jobs, exports); a query per row makes the two counts differ. The bounds are
today's counts with two queries of room.
"""

from __future__ import annotations

import pytest

from annotation.models import Job, Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from tests.conftest import claim_study_file
from tests.queries import assert_flat, count_queries

pytestmark = pytest.mark.django_db

N = 3
SIZES = (N, 3 * N)
# Each list, with the most queries it may read (today's count + 2) and its rows per N.
LISTS = {
    "/api/v1/studies/": (7, 1),
    "/api/v1/studies/main/items/": (8, 1),
    "/api/v1/responses/": (6, 2),
    "/api/v1/studies/main/participants/": (12, 1),  # competence: one read of the reports
    "/api/v1/jobs/": (8, 2),
    "/api/v1/studies/main/exports/": (10, 1),
}


def build(size: int, owner, enrolled) -> None:
    """``size`` studies, and in "main" ``size`` items, participants, jobs and exports."""
    Study.objects.all().delete()
    for number in range(1, size):
        load_study_file(claim_study_file(slug=f"other-{number}", items=1), owner=owner)
    main = load_study_file(
        claim_study_file(slug="main", items=size, annotations_per_item=size, items_per_session=2), owner=owner
    ).study
    for number in range(size):
        person = enrolled(main, source="prolific", platform_worker_id=f"PID-{size}-{number}")
        for _ in range(2):
            assignment = assign_next_item(participant=person, study=main)
            submit_response(assignment=assignment, answer={"label": "neutral"})
        Job.objects.create(kind="reports", study=main, created_by=owner)
        Job.objects.create(kind="export", study=main, parameters={"format": "csv"}, created_by=owner)


def list_queries(client, size: int) -> dict[str, int]:
    """Queries of each list at ``size``, checking that each lists the rows built for it."""
    counts = {}
    for url, (_, rows_per_size) in LISTS.items():
        counts[url], page = count_queries(lambda: client.get(url))  # noqa: B023 - called at once
        assert len(page.json()["results"]) == rows_per_size * size, url
    return counts


def test_list_endpoints_do_not_query_per_row(client_for, users, enrolled):
    client = client_for("owner")
    measured = {}
    for size in SIZES:
        build(size, users["owner"], enrolled)
        measured[size] = list_queries(client, size)
    for url, (bound, _) in LISTS.items():
        assert_flat({size: counts[url] for size, counts in measured.items()}, at_most=bound)
