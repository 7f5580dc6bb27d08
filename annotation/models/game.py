"""The boundary game's running totals per player, kept as rounds are stored."""

from __future__ import annotations

from django.db import models

OVERALL = ""  # the category key of a player's totals over every category


class PlayerStats(models.Model):
    """One player's totals in one category (``OVERALL``: all of them together).

    Updated in the transaction that stores a round (``annotation.kinds.boundary.game``), so
    leaderboards and profiles read a handful of rows instead of scanning responses.
    ``played`` counts every round, attention checks included, and numbers the rounds of
    the player's history; ``rounds``, ``points_total``, ``exact`` and ``average`` count
    the scored rounds only.
    """

    participant = models.ForeignKey(
        "annotation.Participant", on_delete=models.CASCADE, related_name="game_stats"
    )
    category = models.CharField(max_length=40, blank=True)
    played = models.PositiveIntegerField(default=0)
    rounds = models.PositiveIntegerField(default=0)
    points_total = models.FloatField(default=0.0)
    exact = models.PositiveIntegerField(default=0)
    average = models.FloatField(default=0.0)
    last_played_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "player stats"
        constraints = [
            models.UniqueConstraint(fields=["participant", "category"], name="player_stats_unique"),
        ]
        indexes = [models.Index(fields=["category", "-average", "-rounds"], name="player_stats_rank")]

    def __str__(self) -> str:
        return f"{self.participant} in {self.category or 'all categories'}"
