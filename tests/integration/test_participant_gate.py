"""The participant gate: a participant screened out after entry stops at the very next
request, someone else's page is a 404, and refusals look the same on entry and in the game.
A study closed, a participant blocked and a page past its time: tests/adversarial/
(findings 3, 12 and 17), which share these fixtures."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Enrollment, Participant, Response, Study
from annotation.services.attention import screen_out
from annotation.services.research import change_study_status, set_participant_marks
from annotation.services.studies import load_study_file
from tests.game_helpers import boundary_study_file, reveal, round_id, start_game
from tests.integration.test_exams import exam_action
from tests.integration.test_participant_flow import start, task_action

pytestmark = pytest.mark.django_db
CLAIM_ANSWER = {"label": "supports", "evidence": ["0"]}


def close(study: Study, participant: Participant | None = None) -> None:
    change_study_status(study, status=Study.Status.CLOSED)


def block(study: Study, participant: Participant) -> None:
    enrollment = Enrollment.objects.get(study=study, participant=participant)
    set_participant_marks(enrollment, changes={"blocked": True})


def stopped(response, status: int, text: str) -> bool:
    """The participant got the closed (410) or blocked (403) page, not a further page."""
    return response.status_code == status and text in response.content.decode()


CLOSED = (410, "no longer takes answers")
BLOCKED = (403, "You cannot take part in this study")


@pytest.fixture
def on_a_page(client, make_claim_study):
    """A Prolific participant who answered page 1 and holds page 2 of a claim study."""
    study = make_claim_study(items=4, items_per_session=4)
    html = start(client, study.slug, "?PROLIFIC_PID=gate-1")
    client.post(task_action(html), CLAIM_ANSWER)
    held = task_action(client.get(f"/s/{study.slug}/task/").content.decode())
    return study, Participant.objects.get(platform_worker_id="gate-1"), held


def test_a_screened_out_participant_cannot_answer_the_page_they_still_hold(client, on_a_page):
    study, participant, held = on_a_page
    screen_out(enrollment=Enrollment.objects.get(participant=participant), reason="test")
    response = client.post(held, CLAIM_ANSWER)
    assert response.status_code == 302 and response["Location"] == f"/s/{study.slug}/done/"
    assert Response.objects.count() == 1


def test_someone_elses_page_is_404_and_stores_nothing(on_a_page):
    study, _, held = on_a_page
    other = Client()
    start(other, study.slug, "?PROLIFIC_PID=gate-2")
    assert other.post(held, CLAIM_ANSWER).status_code == 404
    assert Response.objects.count() == 1


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
    html = start(client, study.slug, "?PROLIFIC_PID=exam-gate")
    return study, Participant.objects.get(platform_worker_id="exam-gate"), exam_action(html)


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
