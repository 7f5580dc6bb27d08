"""Attention checks in the game: all-human passages that ask for "human" at every step.

Failing past the study's allowance flags the participant and marks their responses in
the study (reports leave them out). Paid participants are screened out with the
screen-out code; volunteers keep playing, off the leaderboards, unless the study's
``volunteer_attention_policy`` is ``screen_out``.
"""

import pytest
from django.test import Client

from annotation.kinds.boundary.leaderboards import leaderboard
from annotation.models import Assignment, Enrollment, Participant, PlayerStats, Response
from annotation.services.authoring.studies import load_study_file
from tests.game_helpers import answer, boundary_study_file, guess, reveal, round_id, start_game
from tests.helpers.crowd_ids import prolific_id

pytestmark = pytest.mark.django_db


def checked_study(slug: str = "checked", **fields):
    """Four pages, two of them attention checks (never the first page)."""
    data = boundary_study_file(slug=slug, items=6, attention=2, items_per_session=4, attention_check_rate=0.5)
    data.update(fields)
    return load_study_file(data).study


def play_page(client, slug: str, *, fail_checks: bool):
    """Play the current page: checks are failed (machine at sentence 2) or passed; other
    passages are marked at their third sentence. Returns (assignment, last response)."""
    html = client.get(f"/s/{slug}/task/").content.decode()
    assignment = Assignment.objects.select_related("item").get(pk=round_id(html))
    length = len(assignment.item.payload["sentences"])
    if assignment.item.is_attention_check and not fail_checks:
        for seen in range(1, length):
            reveal(client, slug, assignment.pk, seen)
        guess(client, slug, assignment.pk, length)
    else:
        for seen in (1, 2):
            reveal(client, slug, assignment.pk, seen)
        guess(client, slug, assignment.pk, 2)
    return assignment, answer(client, slug, assignment.pk, "The second sentence sounds off.")


def test_a_volunteer_who_fails_keeps_playing_flagged_and_off_the_leaderboards(settings):
    settings.LEADERBOARD_MIN_ROUNDS = 1
    study = checked_study()
    client = Client()
    start_game(client, study.slug)
    checks = []
    for _ in range(4):
        assignment, result = play_page(client, study.slug, fail_checks=True)
        assert result.status_code == 200  # the game goes on after a failed check
        if assignment.item.is_attention_check:
            checks.append(result.content.decode())
    assert len(checks) == 2
    assert "attention check" in checks[0] and 'id="round-points"' not in checks[0]  # no points to show
    participant = Participant.objects.get()
    enrollment = Enrollment.objects.get(participant=participant)
    assert enrollment.flagged and enrollment.status == "active" and enrollment.attention_failed == 2
    assert Response.objects.filter(participant=participant).count() == 4
    assert not Response.objects.filter(participant=participant, flagged=False).exists()
    check_responses = Response.objects.filter(is_attention_check=True)
    assert {(r.points, r.correct) for r in check_responses} == {(None, False)}
    totals = PlayerStats.objects.get(participant=participant, category="")
    assert (totals.played, totals.rounds) == (4, 2)  # checks are numbered in the history, not scored
    assert leaderboard(participant=participant).you.rank is None
    assert leaderboard().ranked == 0


def test_a_volunteer_who_passes_is_counted_and_not_flagged():
    study = checked_study()
    client = Client()
    start_game(client, study.slug)
    for _ in range(4):
        play_page(client, study.slug, fail_checks=False)
    enrollment = Enrollment.objects.get()
    assert (enrollment.attention_passed, enrollment.attention_failed) == (2, 0)
    assert not enrollment.flagged
    assert not Response.objects.filter(flagged=True).exists()
    assert (
        "followed its instruction"
        in client.get(
            f"/s/{study.slug}/a/{Response.objects.filter(is_attention_check=True).first().assignment_id}/boundary/result/"
        ).content.decode()
    )


def test_a_paid_participant_who_fails_is_screened_out_with_the_code():
    study = checked_study(public=False)
    client = Client()
    client.get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('paid-9')}")
    client.post(f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('paid-9')}")
    for _ in range(4):
        assignment, result = play_page(client, study.slug, fail_checks=True)
        if assignment.item.is_attention_check:
            break
    assert result.status_code == 204 and result["HX-Redirect"] == f"/s/{study.slug}/done/"
    done = client.get(f"/s/{study.slug}/done/").content.decode()
    assert "GAME-OUT" in done
    enrollment = Enrollment.objects.get()
    assert enrollment.status == "screened_out" and enrollment.flagged
    assert not Response.objects.filter(flagged=False).exists()


def test_a_study_may_screen_out_volunteers_too():
    study = checked_study(config={"volunteer_attention_policy": "screen_out"})
    client = Client()
    start_game(client, study.slug)
    for _ in range(4):
        assignment, result = play_page(client, study.slug, fail_checks=True)
        if assignment.item.is_attention_check:
            break
    assert result["HX-Redirect"] == f"/s/{study.slug}/done/"
    assert Enrollment.objects.get().status == "screened_out"


def test_an_allowance_lets_one_slip_pass():
    study = checked_study(max_attention_failures=1)
    client = Client()
    start_game(client, study.slug)
    failed_once = False
    for _ in range(4):
        assignment, _ = play_page(client, study.slug, fail_checks=not failed_once)
        failed_once = failed_once or assignment.item.is_attention_check
    assert not Enrollment.objects.get().flagged and not Response.objects.filter(flagged=True).exists()
    assert Enrollment.objects.get().attention_failed == 1


def test_attention_items_must_be_all_human_with_matching_gold():
    from annotation.errors import InputError

    data = boundary_study_file(slug="bad-check", items=1, attention=1)
    data["items"][-1]["gold"] = {"guess": 3}
    with pytest.raises(InputError) as caught:
        load_study_file(data)
    assert any(path.startswith("items[1].gold.guess (") for path in caught.value.errors)
