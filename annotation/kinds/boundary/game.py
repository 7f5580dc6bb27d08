"""The boundary game around the rounds: players' running totals, what a finished round
shows, and the game's public studies (its categories).

Totals live in ``PlayerStats`` rows updated in the transaction that stores a round, so
profiles and leaderboards (``annotation.kinds.boundary.leaderboards``) read a few rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count
from django.utils.translation import gettext, ngettext

from annotation.models import Enrollment, Item, Participant, PlayerStats, Response, Study
from annotation.models.game import OVERALL
from annotation.services.access import public_kind_studies
from annotation.services.participation.guest_history import GuestMerge, merge_guest_into_account
from annotation.services.participation.participants import browser_participant
from stats.boundary import seconds_per_sentence

GAME_KIND = "boundary"  # the name of annotation.kinds.boundary.Boundary
TOTALS = ["played", "rounds", "points_total", "exact", "average", "last_played_at"]  # what a round adds to


@dataclass(frozen=True)
class GameStudy:
    """A public, live boundary study as the landing page shows it."""

    study: Study
    categories: tuple[str, ...]
    passages: int


def record_round(response: Response) -> PlayerStats:
    """Add a stored round to its player's totals and number it in their history; the
    player's overall row, as it is now.

    Called by the kind inside the storing transaction. The player's rows are created when
    missing and locked (overall first, then the category: the same order everywhere), so
    two rounds stored at once, even in two studies, get consecutive ``order`` numbers.
    """
    category = response.item.payload["category"]
    keys = sorted({OVERALL, category})
    rows = _lock_player_rows(response.participant_id, keys)
    order = rows[0].played + 1
    for row in rows:
        _count_round(row, response)
    response.score_details = {**response.score_details, "order": order, **_timings(response.display_order)}
    PlayerStats.objects.bulk_update(rows, TOTALS)
    Response.objects.filter(pk=response.pk).update(score_details=response.score_details)
    return rows[0]


def _lock_player_rows(participant_id: int, keys: list[str]) -> list[PlayerStats]:
    """The player's rows for ``keys`` (sorted), created when missing (one insert that
    passes over those there), then locked in that order."""
    missing = [PlayerStats(participant_id=participant_id, category=key) for key in keys]
    PlayerStats.objects.bulk_create(missing, ignore_conflicts=True)
    rows = PlayerStats.objects.select_for_update().filter(participant_id=participant_id, category__in=keys)
    return list(rows.order_by("category"))


def _count_round(row: PlayerStats, response: Response) -> None:
    row.played += 1
    row.last_played_at = response.answered_at
    if response.points is not None:
        row.rounds += 1
        row.points_total += response.points
        row.exact += int(response.correct is True)
        row.average = row.points_total / row.rounds


def rebuild_player_stats(participant_id: int) -> None:
    """Count a player's totals again from their stored rounds and renumber the rounds in
    answer-time order: after rounds moved between players (a guest's carried to their
    account), the running totals of both no longer add up. Call inside a transaction."""
    locked = PlayerStats.objects.select_for_update().filter(participant_id=participant_id)
    list(locked.order_by("category").values_list("pk", flat=True))  # the lock order of record_round
    locked.delete()
    rounds = (
        Response.objects.filter(participant_id=participant_id, study__kind=GAME_KIND)
        .select_related("item")
        .order_by("answered_at", "id")
    )
    rows: dict[str, PlayerStats] = {}
    for order, response in enumerate(rounds, start=1):
        for key in {OVERALL, response.item.payload["category"]}:
            _count_round(
                rows.setdefault(key, PlayerStats(participant_id=participant_id, category=key)), response
            )
        if response.score_details.get("order") != order:
            details = {**response.score_details, "order": order}
            Response.objects.filter(pk=response.pk).update(score_details=details)
    PlayerStats.objects.bulk_create(rows.values())


def _timings(state: dict) -> dict:
    """Seconds per revealed sentence and until the guess, from the round's reveal log."""
    reveals, guessed_at = (state or {}).get("reveals") or [], (state or {}).get("guessed_at")
    if not reveals or not guessed_at:
        return {"seconds_per_sentence": [], "seconds_to_guess": None}
    times = [datetime.fromisoformat(value) for value in reveals]
    end = datetime.fromisoformat(guessed_at)
    return {
        "seconds_per_sentence": seconds_per_sentence(times, end),
        "seconds_to_guess": round(max((end - times[0]).total_seconds(), 0.0), 3),
    }


def player_totals(participant_id: int) -> PlayerStats:
    """The player's overall row (an unsaved empty one before their first round)."""
    return category_totals(participant_id, OVERALL)


def round_truth(item: Item, answer: dict) -> dict:
    """What a finished round shows: every sentence, which were machine-written, the guess."""
    sentences = item.payload["sentences"]
    boundary, guess, count = item.payload["boundary"], answer["guess"], len(sentences)
    rows = [
        {"number": i + 1, "text": text, "machine": i >= boundary, "guessed": i == guess}
        for i, text in enumerate(sentences)
    ]
    return {
        "truth_sentences": rows,
        "human_sentences": rows[:boundary],
        "machine_sentences": rows[boundary:],
        "boundary_number": boundary + 1,
        "guess_number": guess + 1,
        "all_human": boundary == count,
        "guessed_all_human": guess == count,
        "distance": guess - boundary,
        "model": item.payload.get("model", ""),
        "p": item.payload.get("p"),
    }


def round_verdict(truth: dict, *, points: float | None, attention_check: bool, correct: bool | None) -> str:
    """One sentence that tells the player how their guess compares with the truth."""
    if attention_check:
        if correct:
            return gettext(
                "This passage was an attention check, and you followed its instruction. Thank you!"
            )
        return gettext(
            "This passage was an attention check: its text asked you to answer “human” at every step."
        )
    numbers = {
        "guess": truth["guess_number"],
        "boundary": truth["boundary_number"],
        "late": truth["distance"],
    }
    if truth["all_human"]:
        if truth["guessed_all_human"]:
            return gettext("Right: a person wrote every sentence of this passage.")
        return gettext("A person wrote all of it; sentence %(guess)d was human too.") % numbers
    if truth["distance"] == 0:
        return gettext("Spot on! The machine took over at sentence %(boundary)d.") % numbers
    if truth["distance"] < 0:
        return (
            gettext(
                "Too early: sentence %(guess)d was still human. "
                "The machine took over at sentence %(boundary)d."
            )
            % numbers
        )
    if truth["guessed_all_human"]:
        return (
            gettext("The machine took over at sentence %(boundary)d, and it fooled you to the end.") % numbers
        )
    return (
        ngettext(
            "The machine took over at sentence %(boundary)d; you caught it %(late)d sentence later.",
            "The machine took over at sentence %(boundary)d; you caught it %(late)d sentences later.",
            truth["distance"],
        )
        % numbers
    )


def public_game_studies() -> list[GameStudy]:
    """The boundary studies anyone may play, with their categories and passage counts."""
    studies = list(public_kind_studies(GAME_KIND).order_by("title"))
    found: dict[int, set[str]] = {study.pk: set() for study in studies}
    counts: dict[int, int] = dict.fromkeys(found, 0)
    rows = (
        Item.objects.filter(study__in=studies, is_attention_check=False)
        .values_list("study_id", "payload__category")
        .annotate(n=Count("id"))
        .order_by()
    )
    for study_id, category, n in rows:
        found[study_id].add(category)
        counts[study_id] += n
    return [GameStudy(study, tuple(sorted(found[study.pk])), counts[study.pk]) for study in studies]


def public_categories() -> list[str]:
    """The categories of the public game, for the leaderboards' tabs."""
    return sorted({category for game_study in public_game_studies() for category in game_study.categories})


def finished_study_ids(participant: Participant | None) -> set[int]:
    """The game studies whose every passage this player has played (their session is over)."""
    if participant is None:
        return set()
    done = (Enrollment.Status.COMPLETED, Enrollment.Status.SCREENED_OUT)
    rows = Enrollment.objects.filter(participant=participant, study__kind=GAME_KIND, status__in=done)
    return set(rows.values_list("study_id", flat=True))


def category_totals(participant_id: int, category: str) -> PlayerStats:
    """The player's row for one category (an unsaved empty one before their first round)."""
    row = PlayerStats.objects.filter(participant_id=participant_id, category=category).first()
    return row if row is not None else PlayerStats(participant_id=participant_id, category=category)


def player_name(participant: Participant) -> str:
    """What a leaderboard shows: the username, or a short guest name (escaped by templates)."""
    if participant.user is not None:
        return participant.user.get_username()
    return gettext("Guest %(id)s") % {"id": participant.public_id[:6]}


def participant_after_login(
    *, user, session_participant_id: int | None
) -> tuple[Participant | None, GuestMerge]:
    """Who plays once ``user`` logs in, and what became of this browser's guest history:
    the account's own participant, which takes the guest's rounds over
    (``merge_guest_into_account``); else the guest itself, which the account then keeps.

    Only a guest of the open web is claimed or merged: a crowd platform's participant (a
    Prolific or MTurk id, which anyone can put in a link) never becomes an account's.
    """
    current = browser_participant(session_id=session_participant_id)  # before the login
    is_guest = (
        current is not None and current.user_id is None and current.source == Participant.Source.ORGANIC
    )
    guest = current if is_guest else None
    own = Participant.objects.filter(user=user).first()
    if own is not None:
        merged = merge_guest_into_account(guest=guest, account=own) if guest is not None else GuestMerge()
        return own, merged
    if guest is None:
        return None, GuestMerge()
    claimed = Participant.objects.filter(pk=guest.pk, user__isnull=True).update(user=user)
    return (Participant.objects.get(pk=guest.pk) if claimed else None), GuestMerge()
