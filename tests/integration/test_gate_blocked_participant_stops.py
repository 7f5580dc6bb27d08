"""Review finding 12 (adversarial review): a blocked participant kept working in their open
session; only re-entry was refused. The gate (``gate.require_live_step``) checks ``blocked``
on every step."""

from __future__ import annotations

import pytest

from tests.helpers.gate import BLOCKED, block, exam_steps_refused, round_steps_refused, survey_steps_refused

pytestmark = pytest.mark.django_db


def test_a_blocked_participant_gets_no_further_page_and_stores_no_answer(client, on_a_page):
    survey_steps_refused(client, on_a_page, block, BLOCKED)


def test_a_blocked_player_cannot_go_on_with_a_round(round_in_play):
    round_steps_refused(round_in_play, block, BLOCKED)


def test_a_blocked_participant_cannot_answer_the_exam(client, in_the_exam):
    exam_steps_refused(client, in_the_exam, block, BLOCKED)
