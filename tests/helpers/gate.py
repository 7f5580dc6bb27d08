"""The participant gate's fixtures and checks, shared by tests/integration/test_participant_gate.py
and the gate tests of a closed study, a blocked participant and an expired page
(tests/integration/test_gate_*.py): a participant on a survey page, in a game round and in an
exam; stopping the study or the participant; after a stop mid-session, every kind of step is
refused with the same page and nothing is stored. Fixtures loaded through ``pytest_plugins``
in tests/conftest.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

from annotation.models import Assignment, Participant, Response, Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.study_status import change_study_status
from tests.game_helpers import answer, boundary_study_file, guess, reveal, round_id, start_game
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.exams import exam_action
from tests.helpers.flow import start, task_action

CLAIM_ANSWER = {"label": "supports", "evidence": ["0"]}
CLOSED = (410, "no longer takes answers")
BLOCKED = (403, "You cannot take part in this study")
Stop = Callable[[Study, Participant], None]


def close(study: Study, participant: Participant | None = None) -> None:
    change_study_status(study, status=Study.Status.CLOSED)


def block(study: Study, participant: Participant) -> None:
    """An admin's block (the one site-wide mark)."""
    Participant.objects.filter(pk=participant.pk).update(blocked=True)


def stopped(response, status: int, text: str) -> bool:
    """The participant got the closed (410) or blocked (403) page, not a further page."""
    return response.status_code == status and text in response.content.decode()


@pytest.fixture
def on_a_page(client, make_claim_study):
    """A Prolific participant who answered page 1 and holds page 2 of a claim study."""
    study = make_claim_study(items=4, items_per_session=4)
    html = start(client, study.slug, f"?PROLIFIC_PID={prolific_id('gate-1')}")
    client.post(task_action(html), CLAIM_ANSWER)
    held = task_action(client.get(f"/s/{study.slug}/task/").content.decode())
    return study, Participant.objects.get(platform_worker_id=prolific_id("gate-1")), held


@pytest.fixture
def round_in_play():
    """A guest in a round of the public game, one sentence revealed."""
    study = load_study_file(boundary_study_file(slug="gated-game", items=3)).study
    client = Client()
    round_number = round_id(start_game(client, study.slug).content.decode())
    assert reveal(client, study.slug, round_number, 1).status_code == 200
    return study, client, round_number


@pytest.fixture
def in_the_exam(client, example_study_file):
    """A participant on the first question of the qualification exam a study requires."""
    load_study_file(example_study_file("simulation-exam"))
    main = example_study_file("plausibility")
    main.update(qualification="demo-simulation-exam")
    study = load_study_file(main).study
    html = start(client, study.slug, f"?PROLIFIC_PID={prolific_id('exam-gate')}")
    return study, Participant.objects.get(platform_worker_id=prolific_id("exam-gate")), exam_action(html)


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
