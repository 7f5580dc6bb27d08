"""The task page's render alone, without a database: what the template costs per page.

    PYTHONHASHSEED=0 valgrind --tool=callgrind .venv/bin/python bench/task_page_render.py 200
    (and 0): (count(200) - count(0)) / 200 = instructions per render

Renders ``annotation/task.html`` for a claim item of three sentences (as ``bench/load.py``'s
items) N times, each as the page a one-trip answer returns (a boosted htmx request, every
context processor, a CSRF token), with unsaved rows: no statement runs, so the count does not
move with PostgreSQL's speed as the participant loop's does (``participant_profile.py``).
``--classic``: as a GET, the whole page. ``--show``: print one render.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("renders", type=int)
    parser.add_argument("--classic", action="store_true", help="a GET's whole page, not the swapped body")
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    os.environ.update({"DEBUG": "0", "STATIC_MANIFEST": "0", "DATABASE_URL": "sqlite:///:memory:"})
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "roft_site.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-not-a-secret")
    import django

    django.setup()
    from django.contrib.auth.models import AnonymousUser
    from django.contrib.messages.storage.fallback import FallbackStorage
    from django.contrib.sessions.backends.signed_cookies import SessionStore
    from django.shortcuts import render
    from django.test import RequestFactory
    from django.utils import translation

    from annotation.models import Assignment, Item, Study
    from annotation.views.task_page import task_page_context

    study = Study(pk=1, slug="s", title="Load s", kind="claim", items_per_session=20, language="en")
    payload = {"claim": "Claim 1 holds.", "sentences": ["One.", "Two.", "Three."]}
    item = Item(pk=7, study=study, external_id="c1", payload=payload)
    assignment = Assignment(pk=11, item=item, study=study)
    headers = {} if args.classic else {"HTTP_HX_REQUEST": "true", "HTTP_HX_BOOSTED": "true"}
    translation.activate(study.language)
    for number in range(1, args.renders + 2):  # the first compiles the templates
        request = RequestFactory().post(f"/s/s/a/{number}/", **headers)
        request.user, request.session = AnonymousUser(), SessionStore()
        request._messages = FallbackStorage(request)
        context = task_page_context(study, item, assignment, number=number, total=20)
        page = render(request, "annotation/task.html", context)
    if args.show:
        print(page.content.decode())


if __name__ == "__main__":
    main()
