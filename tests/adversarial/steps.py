"""Checks shared by the findings about the participant gate (3, 12): after a study is closed
or a participant blocked mid-session, every kind of step is refused with the same page and
nothing is stored."""

from __future__ import annotations

from collections.abc import Callable

from django.test import Client

from annotation.models import Assignment, Participant, Response, Study
from tests.game_helpers import answer, guess, reveal
from tests.integration.test_participant_gate import stopped

CLAIM_ANSWER = {"label": "supports", "evidence": ["0"]}
Stop = Callable[[Study, Participant], None]


def survey_steps_refused(client: Client, on_a_page, stop: Stop, expected: tuple[int, str]) -> None:
    """The held page's submit, a new task page and leaving: all refused, nothing written."""
    study, participant, held = on_a_page
    stop(study, participant)
    assignments = Assignment.objects.count()
    assert stopped(client.post(held, CLAIM_ANSWER), *expected)
    assert stopped(client.get(f"/s/{study.slug}/task/"), *expected)
    assert stopped(client.get(f"/s/{study.slug}/leave/"), *expected)
    assert Response.objects.count() == 1  # page 1 only, answered before the stop
    assert Assignment.objects.count() == assignments  # no new page handed out


def round_steps_refused(round_in_play, stop: Stop, expected: tuple[int, str]) -> None:
    """Reveal, guess and the reason of a game round in play: refused; htmx leaves the round."""
    study, client, round_number = round_in_play
    stop(study, Participant.objects.get())
    for step in (
        reveal(client, study.slug, round_number, 2),
        guess(client, study.slug, round_number, 2),
        answer(client, study.slug, round_number),
    ):
        assert stopped(step, *expected)
        assert step["HX-Redirect"] == f"/s/{study.slug}/"
    assert Assignment.objects.get(pk=round_number).state["revealed"] == 2
    assert Response.objects.count() == 0


def exam_steps_refused(client: Client, in_the_exam, stop: Stop, expected: tuple[int, str]) -> None:
    """An exam answer, the exam page and a retry: refused, nothing written."""
    study, participant, action = in_the_exam
    stop(study, participant)
    assert stopped(client.post(action, {"choice": "yes"}), *expected)
    assert stopped(client.get(f"/s/{study.slug}/exam/"), *expected)
    assert stopped(client.post(f"/s/{study.slug}/exam/retry/"), *expected)
    assert Response.objects.count() == 0
