"""A boundary round through the HTTP layer: what is stored, and what cannot be cheated."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, PlayerStats, Response
from annotation.services.authoring.studies import load_study_file
from tests.game_helpers import (
    HTMX,
    LENGTH,
    answer,
    boundary_study_file,
    guess,
    play_round,
    reveal,
    round_id,
    sentence_text,
    start_game,
    step_url,
)
from tests.helpers.crowd_ids import prolific_id

pytestmark = pytest.mark.django_db


@pytest.fixture
def one_passage_game():
    """One passage, the machine taking over at index 4 (sentence 5)."""
    return load_study_file(boundary_study_file(slug="game", items=1, boundaries=[4])).study


@pytest.fixture
def player(one_passage_game):
    client = Client()
    html = start_game(client, one_passage_game.slug).content.decode()
    return client, round_id(html)


def test_a_round_stores_guess_points_reason_timings_and_order(one_passage_game, player):
    client, assignment_id = player
    for seen in range(1, 7):
        fragment = reveal(client, "game", assignment_id, seen).content.decode()
        assert sentence_text(0, seen) in fragment  # exactly the next sentence…
        assert sentence_text(0, seen - 1) not in fragment  # …and not the ones already shown
    form = guess(client, "game", assignment_id, 6).content.decode()
    assert "You marked sentence 7" in form and 'name="reason"' in form
    result = answer(client, "game", assignment_id, "It forgets the harbour.", ["irrelevant", "grammar"])
    html = result.content.decode()
    assert 'id="round-points">+3<' in html and "2 sentences later" in html
    response = Response.objects.get()
    assert response.answer == {
        "guess": 6,
        "reason": "It forgets the harbour.",
        "reason_categories": ["grammar", "irrelevant"],
    }
    assert (response.points, response.correct) == (3, False)
    details = response.score_details
    assert details["distance"] == 2 and details["order"] == 1
    assert len(details["seconds_per_sentence"]) == 7  # one per sentence on screen
    assert all(seconds >= 0 for seconds in details["seconds_per_sentence"])
    assert details["seconds_to_guess"] == pytest.approx(sum(details["seconds_per_sentence"]), abs=0.01)
    log = response.display_order
    assert log["revealed"] == 7 and len(log["reveals"]) == 7 and log["guess"] == 6 and log["guessed_at"]
    assert response.participant.source == "organic"
    totals = PlayerStats.objects.get(participant=response.participant, category="")
    assert (totals.rounds, totals.points_total, totals.exact, totals.played) == (1, 3, 0, 1)


def test_plain_form_posts_play_the_same_round_without_javascript(one_passage_game, player):
    client, assignment_id = player
    for seen in range(1, 5):
        assert reveal(client, "game", assignment_id, seen, htmx=False)["Location"] == "/s/game/task/"
    page = client.get("/s/game/task/").content.decode()
    assert all(sentence_text(0, i) in page for i in range(5))
    assert sentence_text(0, 5) not in page
    assert guess(client, "game", assignment_id, 4, htmx=False).status_code == 302
    posted = client.post(step_url("game", assignment_id, "answer"), {"reason": "Too neat."})
    assert posted["Location"] == f"/s/game/a/{assignment_id}/boundary/result/"
    result = client.get(posted["Location"]).content.decode()
    assert "Spot on" in result and 'id="round-points">+5<' in result


def test_all_human_after_the_last_sentence(one_passage_game, player):
    client, assignment_id = player
    assert guess(client, "game", assignment_id, LENGTH).status_code == 400  # not before the end
    for seen in range(1, LENGTH):
        reveal(client, "game", assignment_id, seen)
    assert reveal(client, "game", assignment_id, LENGTH).status_code == 400  # nothing after the last
    assert guess(client, "game", assignment_id, LENGTH).status_code == 200
    html = answer(client, "game", assignment_id, reason="").content.decode()  # reason optional here
    assert 'id="round-points">+0<' in html and "fooled you to the end" in html
    assert Response.objects.get().answer["guess"] == LENGTH


def test_double_posts_change_nothing_and_award_once(one_passage_game, player):
    client, assignment_id = player
    reveal(client, "game", assignment_id, 1)
    again = reveal(client, "game", assignment_id, 1)  # a double click on "still human"
    assert again.status_code == 200 and sentence_text(0, 1) in again.content.decode()
    assert Assignment.objects.get().state["revealed"] == 2
    for seen in range(2, 5):
        reveal(client, "game", assignment_id, seen)
    assert guess(client, "game", assignment_id, 4).status_code == 200
    assert guess(client, "game", assignment_id, 4).status_code == 200  # the same guess again
    changed = guess(client, "game", assignment_id, 3)
    assert changed.status_code == 409 and "already made your guess" in changed.content.decode()
    assert answer(client, "game", assignment_id).status_code == 200
    second = answer(client, "game", assignment_id, "Another reason.")
    assert second.status_code == 409 and "already answered" in second.content.decode()
    assert Response.objects.count() == 1 and Response.objects.get().points == 5
    assert PlayerStats.objects.get(category="").points_total == 5


def test_a_finished_round_cannot_be_replayed(one_passage_game, player):
    client, assignment_id = player
    for seen in range(1, 5):
        reveal(client, "game", assignment_id, seen)
    guess(client, "game", assignment_id, 4)
    answer(client, "game", assignment_id)
    for response in (
        reveal(client, "game", assignment_id, 5),
        guess(client, "game", assignment_id, 5),
        answer(client, "game", assignment_id),
        client.post(step_url("game", assignment_id, "reveal"), {"seen": 5}),  # without htmx too
    ):
        assert response.status_code == 409
        assert "nothing" in response.content.decode()
    assert client.get(step_url("game", assignment_id, "result")).status_code == 200  # read-only
    assert client.post(f"/s/game/a/{assignment_id}/", {"reason": "x"}).status_code == 302  # stored answer
    assert Response.objects.count() == 1 and PlayerStats.objects.get(category="").played == 1


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "between 1 and 10"),
        ("11", "between 1 and 10"),
        ("-3", "between 1 and 10"),
        ("nine", "whole number"),
        ("7", "newest sentence"),  # a sentence not shown yet
        ("1", "newest sentence"),  # an older sentence
    ],
)
def test_tampered_guesses_are_refused_and_name_the_field(one_passage_game, player, value, message):
    client, assignment_id = player
    for seen in range(1, 4):
        reveal(client, "game", assignment_id, seen)
    refused = guess(client, "game", assignment_id, value)
    assert refused.status_code == 400 and message in refused.content.decode()
    assert Assignment.objects.get().state["guess"] is None
    plain = guess(client, "game", assignment_id, value, htmx=False)
    assert plain.status_code == 400 and 'data-field="guess"' in plain.content.decode()


def test_reveals_out_of_step_are_refused(one_passage_game, player):
    client, assignment_id = player
    assert reveal(client, "game", assignment_id, 5).status_code == 400  # skipping ahead
    assert reveal(client, "game", assignment_id, "x").status_code == 400
    assert Assignment.objects.get().state["revealed"] == 1


def test_the_answer_needs_the_guess_first_and_a_reason(one_passage_game, player):
    client, assignment_id = player
    early = answer(client, "game", assignment_id, guess="3")  # a posted guess is ignored
    assert early.status_code == 400 and "first" in early.content.decode()
    generic = client.post(f"/s/game/a/{assignment_id}/", {"reason": "x", "guess": "3"})
    assert generic.status_code == 400  # the generic submit cannot skip the steps either
    for seen in range(1, 3):
        reveal(client, "game", assignment_id, seen)
    guess(client, "game", assignment_id, 2)
    missing = answer(client, "game", assignment_id, reason="  ")
    assert missing.status_code == 400 and "gave the machine away" in missing.content.decode()
    assert missing["HX-Retarget"] == "#round-controls"
    bad_category = answer(client, "game", assignment_id, categories=["vibes"])
    assert bad_category.status_code == 400
    assert Response.objects.count() == 0
    assert answer(client, "game", assignment_id, guess="5").status_code == 200
    assert Response.objects.get().answer["guess"] == 2  # the round's guess, not the posted one


def test_foreign_and_missing_rounds_are_404(one_passage_game, player):
    client, assignment_id = player
    intruder = Client()
    start_game(intruder, "game")
    for response in (
        reveal(intruder, "game", assignment_id, 1),  # another participant's round
        guess(intruder, "game", assignment_id, 1),
        answer(intruder, "game", assignment_id),
        intruder.get(step_url("game", assignment_id, "result")),
        reveal(client, "game", 999999, 1),  # no such round
        client.post("/s/game/a/abc/boundary/reveal/", {"seen": 1}, headers=HTMX),
    ):
        assert response.status_code == 404
    other = load_study_file(boundary_study_file(slug="other", items=1)).study
    start_game(client, other.slug)
    assert reveal(client, "other", assignment_id, 1).status_code == 404  # a round of another study
    assert Assignment.objects.get(pk=assignment_id).state["revealed"] == 1


def test_an_expired_round_takes_no_more_steps(one_passage_game, player):
    client, assignment_id = player
    Assignment.objects.filter(pk=assignment_id).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = reveal(client, "game", assignment_id, 1)
    assert response.status_code == 409 and "ran out of time" in response.content.decode()


def test_paid_participants_play_the_studys_items_by_its_link():
    study = load_study_file(
        boundary_study_file(slug="paid", items=2, public=False, items_per_session=2)
    ).study
    client = Client()
    query = f"?PROLIFIC_PID={prolific_id('worker-7')}&STUDY_ID=s&SESSION_ID=x"
    client.get(f"/s/{study.slug}/{query}")
    html = client.post(f"/s/{study.slug}/consent/{query}", follow=True).content.decode()
    assert "Passage 1 of 2" in html
    assert client.post(f"/play/s/{study.slug}/").status_code == 404  # not a public category
    play_round(client, study.slug, mark=5)
    play_round(client, study.slug, mark=None)
    done = client.get(f"/s/{study.slug}/task/", follow=True).content.decode()
    assert "GAME-DONE" in done
    assert set(Response.objects.values_list("participant__source", flat=True)) == {"prolific"}
    orders = sorted(r.score_details["order"] for r in Response.objects.all())
    assert orders == [1, 2]


def test_a_game_step_on_a_study_of_another_kind_is_a_404(client):
    """The game's step URLs sit under every study's pages: on a study that is not a game
    they are not found (they read a round's sentences the item does not have)."""
    from annotation.models import Response
    from annotation.services.authoring.studies import load_study_file
    from tests.helpers.flow import start, task_action
    from tests.helpers.questionnaire import questionnaire_file

    study = load_study_file(questionnaire_file()).study
    page = task_action(start(client, study.slug))
    for step, form in (("reveal", {"seen": "1"}), ("guess", {"guess": "7"}), ("answer", {"reason": "x"})):
        assert client.post(f"{page}boundary/{step}/", form, headers={"HX-Request": "true"}).status_code == 404
    assert client.get(f"{page}boundary/result/").status_code in (404, 405)
    assert Response.objects.count() == 0
