"""Review finding 17 (adversarial review): an answer submitted after its page expired was
accepted until the release job ran, and the game refused a reveal but took the reason of an
expired round. The gate and ``submit_response`` compare ``expires_at`` with the time of the
request."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Response
from tests.game_helpers import answer, guess
from tests.helpers.gate import CLAIM_ANSWER

pytestmark = pytest.mark.django_db


def test_a_page_past_its_time_takes_no_answer_before_any_release_runs(client, on_a_page):
    *_, held = on_a_page
    Assignment.objects.filter(status="assigned").update(expires_at=timezone.now() - timedelta(hours=2))
    response = client.post(held, CLAIM_ANSWER, follow=True)
    assert "expired before it was answered" in response.content.decode()
    assert Response.objects.count() == 1  # page 1 only
    assert not Assignment.objects.filter(status="answered", position=2).exists()


def test_an_expired_round_takes_no_reason_after_the_guess(round_in_play):
    study, client, round_number = round_in_play
    assert guess(client, study.slug, round_number, 1).status_code == 200
    Assignment.objects.filter(pk=round_number).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = answer(client, study.slug, round_number)
    assert response.status_code == 409 and "ran out of time" in response.content.decode()
    assert Response.objects.count() == 0
