"""Overlap between two sets of choices (evidence sentences, highlighted spans)."""

from __future__ import annotations

from collections.abc import Iterable


def set_f1(predicted: Iterable, reference: Iterable) -> float:
    """F1 of two sets; two empty sets agree perfectly (1.0).

    Used for evidence sentences: one annotator's selection against gold or against
    another annotator (F1 is symmetric, so the order of the arguments does not matter).
    """
    a, b = set(predicted), set(reference)
    if not a and not b:
        return 1.0
    overlap = len(a & b)
    if overlap == 0:
        return 0.0
    return 2 * overlap / (len(a) + len(b))
