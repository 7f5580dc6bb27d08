"""The researchers' participants page and one participant's answer review on a study with a
million responses: time per request and queries per request.

Reuses the claim study of ``bench/reports.py`` (built on first use with COPY: 1,000,000
answers by 50,000 participants over 200,000 items, 5 answers each). Each page is requested
through Django's test client as an admin, three times; the best time is printed. The anchor
is one ``count(*)`` over the study's responses (what reading the whole study costs at the
least). Before this bench the list read every response of the study (6.6 s at 40,000).

    export DATABASE_URL=postgres://…/roft_iN
    .venv/bin/python bench/participants.py [--responses 1000000] [--rebuild]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from reports import SLUGS, build, existing_responses, setup_django  # bench/ is on sys.path

REPEATS = 3
# Pages render with plain static URLs (no collectstatic manifest needed for a bench).
os.environ.setdefault("STATIC_MANIFEST", "0")


def timed(request) -> tuple[float, int, int]:
    """Best wall time of ``request()`` over REPEATS, its query count and status."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    best, queries, status = float("inf"), 0, 0
    for _ in range(REPEATS):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            answer = request()
            best = min(best, time.perf_counter() - started)
        queries, status = len(captured), answer.status_code
    return best, queries, status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=1_000_000)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    setup_django()
    slug = SLUGS["claim"]
    if args.rebuild or existing_responses(slug) != args.responses:
        started = time.perf_counter()
        build(args.responses, "claim")
        print(f"built {args.responses} responses in {time.perf_counter() - started:.0f} s")
    from django.contrib.auth import get_user_model
    from django.test import Client

    from annotation.models import Enrollment, Response, Study

    study = Study.objects.get(slug=slug)
    admin, _ = get_user_model().objects.get_or_create(
        username="bench-participants", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client(SERVER_NAME="localhost")
    client.force_login(admin)
    started = time.perf_counter()
    total = Response.objects.filter(study=study).count()
    anchor = time.perf_counter() - started
    someone = Enrollment.objects.filter(study=study).select_related("participant").order_by("id").first()
    pages = {
        "participants, page 1": f"/research/s/{slug}/participants/",
        "participants, page 500": f"/research/s/{slug}/participants/?page=500",
        "one participant's answers": f"/research/s/{slug}/participants/{someone.participant.public_id}/",
        "API participants, 50": f"/api/v1/studies/{slug}/participants/?page_size=50",
    }
    print(f"study {slug}: {total} responses; anchor count(*) {anchor * 1000:.0f} ms")
    for name, url in pages.items():
        seconds, queries, status = timed(lambda url=url: client.get(url, secure=True))
        print(
            f"  {name:28s} {seconds * 1000:7.0f} ms  {queries:3d} queries  HTTP {status}  "
            f"({seconds / anchor:.1f}× the count)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
