"""A stale second tab: the survey says the page was answered in another tab and moves on;
the game's stale round offers *Next passage* instead of live buttons."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Response
from annotation.services.authoring.studies import load_study_file
from tests.game_helpers import boundary_study_file, play_round, reveal, round_id, start_game
from tests.helpers.flow import task_action

pytestmark = pytest.mark.django_db


def test_a_survey_page_answered_in_another_tab_says_so_and_shows_the_next(make_claim_study):
    study = make_claim_study(items=3, items_per_session=3, annotations_per_item=1)
    client = Client()  # both tabs share the browser's session
    client.post(f"/s/{study.slug}/consent/", {"decision": "agree"})
    stale = client.get(f"/s/{study.slug}/task/").content.decode()
    client.post(task_action(stale), {"label": "supports", "evidence": "0"})  # tab B
    page = client.post(task_action(stale), {"label": "contradicts", "evidence": "1"}, follow=True)  # tab A
    html = page.content.decode()
    assert "already answered in another tab" in html and "Page 2 of 3" in html
    assert [r.answer["label"] for r in Response.objects.all()] == ["supports"]


def test_a_stale_game_tab_offers_the_next_passage():
    study = load_study_file(boundary_study_file(slug="news", items=3)).study
    client = Client()
    assignment_id = round_id(start_game(client, study.slug).content.decode())
    play_round(client, study.slug, mark=3)  # tab A finishes the round
    stale = reveal(client, study.slug, assignment_id, 1)  # tab B presses Next sentence
    html = stale.content.decode()
    assert stale.status_code == 409 and "This round is over" in html
    assert 'id="next-passage"' in html and 'hx-swap-oob="true"' in html and "still-human" not in html
