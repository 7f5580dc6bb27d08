"""Leaderboards and profiles of the boundary game, read from the stored totals.

Ranked by average points per round among players with at least
``settings.LEADERBOARD_MIN_ROUNDS`` scored rounds; ties share a rank. Only volunteers
(organic players) with an account, in good standing, are ranked: paid participants play for
their study, guests are throwaway sessions (a script playing some to learn a category's answer
key must not rank with the key), players flagged in a study or blocked are left off, and so is
a record no person makes without knowing the answers: more than
``settings.LEADERBOARD_MAX_EXACT_SHARE`` of the scored rounds guessed exactly (docs/game.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import Exists, F, OuterRef, Q, QuerySet

from annotation.models import Enrollment, Participant, PlayerStats, Response
from annotation.models.game import OVERALL

from .charts import PointsChart, points_chart
from .game import GAME_KIND, player_name, player_totals

CHART_ROUNDS = 40


@dataclass(frozen=True)
class Standing:
    rank: int
    name: str
    rounds: int
    points_total: float
    average: float
    is_you: bool = False


@dataclass(frozen=True)
class YourStanding:
    rounds: int
    rank: int | None  # None: not ranked (yet)
    rounds_needed: int  # more scored rounds before a rank
    listed: bool  # False: paid, guest, flagged or blocked players and implausible records are not ranked
    guest: bool = False  # a guest gets a rank by signing up (their rounds come along)


@dataclass(frozen=True)
class Leaderboard:
    category: str
    min_rounds: int
    rows: list[Standing]
    ranked: int
    you: YourStanding | None


@dataclass(frozen=True)
class Profile:
    name: str
    overall: PlayerStats
    categories: list[PlayerStats]
    chart: PointsChart
    recent: Sequence[Mapping[str, Any]] = field(default_factory=list)


def ranked_stats(category: str) -> QuerySet[PlayerStats]:
    """The rows that hold a rank in ``category`` (``OVERALL``: all categories)."""
    return PlayerStats.objects.filter(
        category=category,
        rounds__gte=settings.LEADERBOARD_MIN_ROUNDS,
        exact__lte=F("rounds") * settings.LEADERBOARD_MAX_EXACT_SHARE,
        participant__source=Participant.Source.ORGANIC,
        participant__user__isnull=False,
        participant__blocked=False,
    ).exclude(Exists(Enrollment.objects.filter(participant=OuterRef("participant"), flagged=True)))


def leaderboard(*, category: str = OVERALL, participant: Participant | None = None) -> Leaderboard:
    """The top of the board (``LEADERBOARD_SIZE`` rows) and, when given, the player's place."""
    ranked = ranked_stats(category)
    top = ranked.select_related("participant__user").order_by("-average", "-rounds", "participant_id")
    rows, rank, previous = [], 0, None
    for position, row in enumerate(top[: settings.LEADERBOARD_SIZE], start=1):
        key = (row.average, row.rounds)
        rank = rank if key == previous else position
        previous = key
        is_you = participant is not None and row.participant_id == participant.pk
        rows.append(
            Standing(rank, player_name(row.participant), row.rounds, row.points_total, row.average, is_you)
        )
    you = _your_standing(ranked, category, participant) if participant is not None else None
    return Leaderboard(category, settings.LEADERBOARD_MIN_ROUNDS, rows, ranked.count(), you)


def _your_standing(ranked: QuerySet[PlayerStats], category: str, participant: Participant) -> YourStanding:
    mine = PlayerStats.objects.filter(participant=participant, category=category).first()
    rounds = mine.rounds if mine else 0
    listed = (
        participant.source == Participant.Source.ORGANIC
        and participant.user_id is not None
        and not (
            participant.blocked or Enrollment.objects.filter(participant=participant, flagged=True).exists()
        )
    )
    needed = max(settings.LEADERBOARD_MIN_ROUNDS - rounds, 0)
    if mine is not None and not needed and mine.exact > mine.rounds * settings.LEADERBOARD_MAX_EXACT_SHARE:
        listed = False  # a record no person makes without the answers
    if mine is None or not listed or needed:
        return YourStanding(rounds, None, needed, listed, guest=participant.user_id is None)
    better = ranked.filter(Q(average__gt=mine.average) | Q(average=mine.average, rounds__gt=mine.rounds))
    return YourStanding(rounds, better.count() + 1, 0, listed)


def player_profile(participant: Participant) -> Profile:
    """Totals, per-category figures and the points of the latest rounds."""
    categories = list(
        PlayerStats.objects.filter(participant=participant).exclude(category=OVERALL).order_by("category")
    )
    latest = list(
        Response.objects.filter(participant=participant, study__kind=GAME_KIND, points__isnull=False)
        .order_by("-answered_at", "-id")
        .values("points", "correct", "answered_at", "item__payload__category")[:CHART_ROUNDS]
    )
    latest.reverse()
    return Profile(
        name=player_name(participant),
        overall=player_totals(participant.pk),
        categories=categories,
        chart=points_chart([row["points"] for row in latest if row["points"] is not None]),
        recent=latest,
    )
