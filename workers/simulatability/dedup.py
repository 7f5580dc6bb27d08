"""Duplicates and near-duplicates among an explanation's follow-ups.

A follow-up is a ``duplicate`` when its normalised text (case, accents' compatibility
forms, punctuation and spacing ignored) equals the starter's or a follow-up kept before
it, and a ``near_duplicate`` when its cosine similarity to one kept before it (sentence
encoder embeddings) is at or above the threshold. Earlier follow-ups win: the order is the
order of creation, so a rerun never demotes one already kept.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

KEPT, DUPLICATE, NEAR_DUPLICATE = "kept", "duplicate", "near_duplicate"
STARTER = -1  # duplicate_of: the starter question itself

Embed = Callable[[list[str]], np.ndarray]  # texts -> L2-normalised rows (workers.similarity)


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"[^\w\s]", " ", text)
    return " ".join(text.split())


@dataclass(frozen=True)
class Verdict:
    status: str
    duplicate_of: int | None = None  # index into ``kept`` (or STARTER); None when kept
    similarity: float | None = None  # the highest cosine to anything kept before it


def classify(
    candidates: Sequence[str], kept: Sequence[str], *, starter: str, embed: Embed, threshold: float
) -> tuple[list[Verdict], list[str]]:
    """A verdict per candidate, in order; and the kept texts afterwards (``kept`` + new ones).

    Indices in ``duplicate_of`` point into the returned kept list.
    """
    pool = list(kept)
    seen = {normalise(text): index for index, text in enumerate(pool)}
    seen.setdefault(normalise(starter), STARTER)
    vectors = embed(list(pool) + list(candidates)) if candidates else np.zeros((0, 0))
    pool_rows = list(range(len(pool)))
    verdicts = []
    for offset, text in enumerate(candidates):
        key = normalise(text)
        if key in seen:
            verdicts.append(Verdict(DUPLICATE, seen[key], 1.0))
            continue
        row = vectors[len(kept) + offset]
        best, best_index = None, None
        if pool_rows:
            sims = vectors[pool_rows] @ row
            best_index = int(np.argmax(sims))
            best = float(sims[best_index])
        if best is not None and best >= threshold:
            verdicts.append(Verdict(NEAR_DUPLICATE, best_index, round(best, 4)))
            continue
        seen[key] = len(pool)
        pool.append(text)
        pool_rows.append(len(kept) + offset)
        verdicts.append(Verdict(KEPT, None, None if best is None else round(best, 4)))
    return verdicts, pool
