"""The rater's score of a closed answer: the log-probability of the whole answer after the
prompt, the sum over its tokens (``workers.lm.scoring`` computes them, batched)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workers.lm.loading import LoadedLM
from workers.lm.scoring import score_targets


@dataclass(frozen=True)
class Scored:
    """Per allowed answer, its log-probability; ``truncated``: prompt tokens cut off the front."""

    logprobs: tuple[float, ...]
    truncated: int = 0


def score_options(
    lm: LoadedLM, requests: Sequence[tuple[str, Sequence[str]]], *, batch_size: int = 8
) -> list[Scored]:
    """For each (prompt, answers), the log-probability of each answer, in order. Rows are
    padded on the left: every answer ends at the right edge, so only the last few
    positions' logits are computed."""
    scored = score_targets(lm, requests, batch_size=batch_size, padding_side="left")
    return [Scored(result.sums(), result.truncated) for result in scored]
