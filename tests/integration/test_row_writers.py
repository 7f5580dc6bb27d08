"""One writer per row: pages answered on the site, imported answers, exam questions and game
rounds all create assignments and responses through the same services, so every item's
``slots_taken`` equals its live (assigned or answered) assignments whichever way they came,
and expiry gives back exactly what was taken."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db.models import Count, Q
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, Item, Response
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.assignment import release_expired_assignments
from tests.game_helpers import boundary_study_file, play_round, start_game
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.exams import exam_action
from tests.helpers.flow import start, task_action

pytestmark = pytest.mark.django_db


def assert_slots_match_live_assignments() -> None:
    live = Count("assignments", filter=Q(assignments__status__in=["assigned", "answered"]))
    rows = Item.objects.annotate(live=live).values_list("external_id", "slots_taken", "live")
    mismatched = [(external_id, slots, n) for external_id, slots, n in rows if slots != n]
    assert not mismatched, mismatched


def expire_open_pages() -> int:
    Assignment.objects.filter(status="assigned").update(expires_at=timezone.now() - timedelta(minutes=1))
    return release_expired_assignments()


def import_lines(tmp_path, slug: str, lines: list[dict]) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    call_command("importresponses", slug, str(path), stdout=StringIO())


def test_slots_follow_imports_submits_and_expiry(tmp_path, make_claim_study):
    study = make_claim_study(items=4, annotations_per_item=2, items_per_session=4)
    answer = {"label": "neutral"}
    import_lines(
        tmp_path,
        study.slug,
        [
            {"participant": "ann", "item": "c0", "answer": answer, "shown_at": "2024-05-01T10:00:00Z"},
            {"participant": "bob", "item": "c0", "answer": answer},
            {"participant": "bob", "item": "c1", "answer": answer},
        ],
    )
    assert_slots_match_live_assignments()
    site = Client()
    html = start(site, study.slug, f"?PROLIFIC_PID={prolific_id('site-1')}")
    site.post(task_action(html), {"label": "supports", "evidence": ["0"]})
    site.get(f"/s/{study.slug}/task/")  # holds a second page
    assert_slots_match_live_assignments()
    assert Item.objects.get(external_id="c0").slots_taken == 2  # full: the site never handed it out
    assert not Assignment.objects.filter(item__external_id="c0", participant__source="prolific").exists()
    assert expire_open_pages() == 1
    assert_slots_match_live_assignments()
    imported = Response.objects.filter(imported=True)
    assert imported.count() == 3
    assert set(imported.values_list("assignment__status", flat=True)) == {"answered"}


def test_exam_questions_take_their_slot_again_when_reopened(client, example_study_file):
    load_study_file(example_study_file("simulation-exam"))
    main = example_study_file("plausibility")
    main.update(qualification="demo-simulation-exam")
    study = load_study_file(main).study
    html = start(client, study.slug)
    assert expire_open_pages() == 1  # the first question, left open too long
    assert_slots_match_live_assignments()
    again = client.get(f"/s/{study.slug}/exam/").content.decode()
    assert exam_action(again) == exam_action(html)  # the same question, handed back
    assert_slots_match_live_assignments()
    client.post(exam_action(again), {"choice": "yes"})
    assert Response.objects.filter(study__slug="demo-simulation-exam").count() == 1
    assert_slots_match_live_assignments()


def test_game_rounds_count_like_any_page():
    study = load_study_file(boundary_study_file(slug="slots-game", items=3)).study
    player = Client()
    start_game(player, study.slug)
    play_round(player, study.slug, mark=3)
    player.get(f"/s/{study.slug}/task/")  # the next round, left open
    assert_slots_match_live_assignments()
    assert expire_open_pages() == 1
    assert_slots_match_live_assignments()
    assert Response.objects.get().answer["guess"] == 3
