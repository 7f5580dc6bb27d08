"""RoFT boundary-game measures as pure functions: the scoring rule and timings of one
round, and over many rounds the distances from the boundary, agreement between players
on the same passage, and the spread of skill across players.

Sentence indices are 0-based. ``boundary`` b is the index of the first machine-written
sentence (b = the passage length for an all-human passage); ``guess`` g is the index of
the sentence the player marked machine-written (g = the length when they kept "human"
to the end). The signed distance is ``g - b``: negative = too early (a human sentence
called machine), positive = late.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from .counting import SMALL_RANGE, distinct_counts
from .estimate import Estimate
from .groups import factorize

MAX_POINTS = 5


def boundary_points(guess: int, boundary: int) -> int:
    """5 for the exact boundary, one fewer per sentence late (never below 0), 0 when early.

    A guess before the boundary marks a human sentence as machine-written, which earns
    nothing however close it is; a late guess did find machine text, so it keeps partial
    credit. One round of ``points_for_guesses``, so the rule is written once.
    """
    return int(points_for_guesses(guess, boundary))


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


def points_for_guesses(guess, boundary) -> np.ndarray:
    """The game's points: 5 for the exact sentence, one fewer per sentence late, 0 early."""
    distance = np.asarray(guess, dtype=np.float64) - np.asarray(boundary, dtype=np.float64)
    return np.where(distance < 0, 0.0, np.maximum(0.0, MAX_POINTS - distance))


def exact_rate(distances) -> Estimate:
    """Share of guesses on exactly the boundary sentence."""
    d = _finite(distances)
    if d.size == 0:
        return Estimate.undefined("no guesses")
    return Estimate(float((d == 0).mean()), n=int(d.size))


def distance_histogram(distances) -> dict[int, int]:
    """Count of guesses per signed distance (guess − boundary), every distance seen."""
    d = _finite(distances).astype(np.int64)
    if d.size == 0:
        return {}
    low = int(d.min())
    counts = np.bincount(d - low)
    return {low + offset: int(count) for offset, count in enumerate(counts) if count}


def mean_distance_after(distances) -> Estimate:
    """Mean distance of the guesses at or after the boundary (how late detection comes)."""
    d = _finite(distances)
    late = d[d >= 0]
    if late.size == 0:
        return Estimate.undefined("no guess at or after the boundary")
    return Estimate(float(late.mean()), n=int(late.size))


def pairwise_agreement(items, guesses) -> tuple[Estimate, Estimate]:
    """Among pairs of players who guessed on the same item: share of pairs that chose the
    same sentence, and share whose guesses are at most one sentence apart.

    Each pair of guesses on an item counts once (an item with three players gives three
    pairs). ``details`` say how many items had at least two players.
    """
    item = np.asarray(items, dtype=np.int64)
    guess = np.asarray(guesses, dtype=np.float64)
    keep = ~np.isnan(guess)
    if not keep.all():
        item, guess = item[keep], guess[keep]
    guess = guess.astype(np.int64)
    if item.size == 0:
        undefined = Estimate.undefined("no item has two or more players")
        return undefined, undefined
    low = int(guess.min())
    span = int(guess.max()) - low + 2  # one empty key after each item's guesses
    keys = item * span + (guess - low)
    if int(item.min()) >= 0 and (int(item.max()) + 1) * span <= SMALL_RANGE:
        # one count per key, in order: a key's neighbour is the next count (never the next
        # item's: the empty key between them counts 0)
        counts = np.bincount(keys)
        adjacent = float((counts[:-1] * counts[1:]).sum())
        per_item = np.bincount(item)
    else:
        keys, counts = distinct_counts(keys)
        neighbour = np.searchsorted(keys, keys + 1)
        found = neighbour < keys.size
        adjacent_counts = np.zeros_like(counts)
        following = neighbour[found]
        adjacent_counts[found] = np.where(keys[following] == keys[found] + 1, counts[following], 0)
        adjacent = float((counts * adjacent_counts).sum())
        per_item = distinct_counts(item)[1]
    same = float((counts * (counts - 1) // 2).sum())
    pairs = float((per_item * (per_item - 1) // 2).sum())
    details = {"items": int((per_item >= 2).sum())}
    if pairs == 0:
        undefined = Estimate.undefined("no item has two or more players", **details)
        return undefined, undefined
    return (
        Estimate(same / pairs, n=int(pairs), details=details),
        Estimate((same + adjacent) / pairs, n=int(pairs), details=details),
    )


def player_skill(players, points, *, tail: float = 0.05) -> dict[str, Estimate]:
    """Mean points per player, summarised: the median player, and the mean of the top and
    bottom ``tail`` share of players (at least one player each).
    """
    player = np.asarray(players)
    x = np.asarray(points, dtype=np.float64)
    keep = ~np.isnan(x)
    if not keep.all():
        player, x = player[keep], x[keep]
    if x.size == 0:
        undefined = Estimate.undefined("no scored guesses")
        return {"median": undefined, "top": undefined, "bottom": undefined}
    index = factorize(player)[1]
    means = np.sort(np.bincount(index, weights=x) / np.bincount(index))
    k = max(1, math.ceil(tail * means.size))
    details = {"players": int(means.size), "tail_players": k}
    return {
        "median": Estimate(float(np.median(means)), n=int(means.size), details=details),
        "top": Estimate(float(means[-k:].mean()), n=k, details=details),
        "bottom": Estimate(float(means[:k].mean()), n=k, details=details),
    }


def _finite(values) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    return x[~np.isnan(x)]
