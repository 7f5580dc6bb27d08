"""Review finding 7 (adversarial review): MTurk's preview
(assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE) of a boundary study returned 500; the survey kinds'
preview lacked the task stylesheet."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Assignment, Participant
from annotation.services.authoring.studies import load_study_file
from tests.game_helpers import boundary_study_file

pytestmark = pytest.mark.django_db

PREVIEW = "?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=h1"


def test_the_game_preview_is_the_round_page_with_its_buttons_off():
    study = load_study_file(boundary_study_file(slug="paid-game", public=False)).study
    page = Client().get(f"/s/{study.slug}/{PREVIEW}")
    html = page.content.decode()
    assert page.status_code == 200 and 'id="preview-notice"' in html
    assert "css/game.css" in html and "Person or machine?" in html
    assert "<fieldset disabled" in html and "/boundary/" not in html and 'method="post"' not in html
    assert not Participant.objects.exists() and not Assignment.objects.exists()


def test_a_survey_preview_loads_the_task_stylesheet(make_claim_study):
    study = make_claim_study()
    html = Client().get(f"/s/{study.slug}/{PREVIEW}").content.decode()
    assert "css/survey.css" in html and 'class="task preview"' in html
    assert "onsubmit" not in html
