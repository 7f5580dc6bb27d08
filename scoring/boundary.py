"""The RoFT boundary game's scoring rule and timings, as pure functions.

Sentence indices are 0-based. ``boundary`` b is the index of the first machine-written
sentence (b = the passage length for an all-human passage); ``guess`` g is the index of
the sentence the player marked machine-written (g = the length when they kept "human"
to the end).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

MAX_POINTS = 5


def boundary_points(guess: int, boundary: int) -> int:
    """5 for the exact boundary, one fewer per sentence late (never below 0), 0 when early.

    A guess before the boundary marks a human sentence as machine-written, which earns
    nothing however close it is; a late guess did find machine text, so it keeps partial
    credit.
    """
    if guess < boundary:
        return 0
    return max(0, MAX_POINTS - (guess - boundary))


def seconds_per_sentence(reveal_times: Sequence[datetime], guessed_at: datetime) -> list[float]:
    """How long each revealed sentence was the newest one on screen.

    Sentence i was read from its reveal until the next reveal; the last one until the
    guess. Clock skew never yields a negative duration.
    """
    ends = [*reveal_times[1:], guessed_at]
    return [
        round(max((end - start).total_seconds(), 0.0), 3)
        for start, end in zip(reveal_times, ends, strict=True)
    ]
