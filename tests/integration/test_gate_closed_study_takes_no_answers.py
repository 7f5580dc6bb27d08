"""Review finding 3 (adversarial review): a closed study kept handing out pages to, and storing
answers from, participants who already had a session (survey pages, game rounds). Every step
now passes the gate (``gate.require_live_step``), which checks the study's status on every
request."""

from __future__ import annotations

import pytest

from tests.helpers.gate import CLOSED, close, exam_steps_refused, round_steps_refused, survey_steps_refused

pytestmark = pytest.mark.django_db


def test_a_closed_study_gives_no_further_page_and_stores_no_answer(client, on_a_page):
    survey_steps_refused(client, on_a_page, close, CLOSED)


def test_a_closed_game_refuses_reveal_guess_and_reason(round_in_play):
    round_steps_refused(round_in_play, close, CLOSED)


def test_a_closed_study_refuses_its_exam_steps(client, in_the_exam):
    exam_steps_refused(client, in_the_exam, close, CLOSED)
