"""The participant gate: a participant screened out after entry stops at the very next
request, someone else's page is a 404, and refusals look the same on entry and in the game.
A study closed, a participant blocked and a page past its time: tests/integration/test_gate_*.py.
The fixtures and checks they share are in tests/helpers/gate.py."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Enrollment, Response
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.attention import screen_out
from tests.game_helpers import boundary_study_file
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.flow import start
from tests.helpers.gate import BLOCKED, CLAIM_ANSWER, CLOSED, block, close, stopped

pytestmark = pytest.mark.django_db


def test_a_screened_out_participant_cannot_answer_the_page_they_still_hold(client, on_a_page):
    study, participant, held = on_a_page
    screen_out(enrollment=Enrollment.objects.get(participant=participant), reason="test")
    response = client.post(held, CLAIM_ANSWER)
    assert response.status_code == 302 and response["Location"] == f"/s/{study.slug}/done/"
    assert Response.objects.count() == 1


def test_someone_elses_page_is_404_and_stores_nothing(on_a_page):
    study, _, held = on_a_page
    other = Client()
    start(other, study.slug, f"?PROLIFIC_PID={prolific_id('gate-2')}")
    assert other.post(held, CLAIM_ANSWER).status_code == 404
    assert Response.objects.count() == 1


def test_entry_and_the_game_refuse_with_the_same_pages(client, on_a_page):
    study, participant, _ = on_a_page
    block(study, participant)
    assert stopped(client.get(f"/s/{study.slug}/"), *BLOCKED)
    close(study)
    assert stopped(Client().get(f"/s/{study.slug}/"), *CLOSED)
    game = load_study_file(boundary_study_file(slug="blocked-game", items=1)).study
    assert stopped(client.post(f"/play/s/{game.slug}/"), *BLOCKED)


def test_without_htmx_a_refused_round_step_shows_the_page_itself(round_in_play):
    study, client, round_number = round_in_play
    close(study)
    step = client.post(f"/s/{study.slug}/a/{round_number}/boundary/reveal/", {"seen": 2})
    assert stopped(step, *CLOSED) and not step.has_header("HX-Redirect")
