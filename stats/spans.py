"""Error spans (ESA / MQM): penalties, and agreement between annotators on where the errors are.

A span is ``{"start", "end", "category", "severity"}`` with character offsets (``end``
exclusive) into one passage. Two agreement figures (docs/statistics.md):

- character-level F1 between two annotators of the same passage: the characters each
  marked as an error (any category; or, with ``by_category``, (character, category) pairs),
  ``2 |A ∩ B| / (|A| + |B|)``, per pair of annotators; a pair that marked nothing at all is
  left out (F1 is undefined there, and counting it as 1 would reward marking nothing);
- character-level Krippendorff's alpha (nominal): every character of a passage with two or
  more annotators is a unit, its value for an annotator the category of the span covering
  it ("none" when none does; where spans overlap, the first by start, then end, then
  category); alpha from the coincidences of those values. This is the character-by-
  character form of Krippendorff's unitizing alpha for one continuum per passage: it
  weights every character alike and compares labels, not segment boundaries (α_u compares
  the lengths of overlapping segments, so the two differ where segments are cut into
  different pieces).

Characters with the same labels from every annotator are counted together (runs between
span boundaries), so a long passage costs as much as its number of spans, not its length.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from .agreement import alpha_from_value_counts
from .estimate import Estimate

NONE = "none"  # the value of a character no span covers


def characters(spans: Sequence[dict], *, by_category: bool = False) -> set:
    """The characters the spans cover (``(character, category)`` pairs with ``by_category``)."""
    out: set = set()
    for span in spans:
        positions = range(span["start"], span["end"])
        out.update((p, span["category"]) for p in positions) if by_category else out.update(positions)
    return out


def char_f1(a: Sequence[dict], b: Sequence[dict], *, by_category: bool = False) -> float | None:
    """F1 between the characters two annotators marked; None when neither marked any."""
    first, second = characters(a, by_category=by_category), characters(b, by_category=by_category)
    total = len(first) + len(second)
    return 2 * len(first & second) / total if total else None


def pairwise_f1(
    units: Sequence, answers: Sequence[Sequence[dict]], *, by_category: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Character F1 of every pair of answers on the same unit (passage): the scores and, per
    score, the index of its unit among the distinct units in first-seen order (a pair
    clusters by its unit). Pairs that marked nothing are left out."""
    grouped: dict = {}
    for unit, spans in zip(units, answers, strict=True):
        grouped.setdefault(unit, []).append(spans)
    scores, owners = [], []
    for index, group in enumerate(grouped.values()):
        for a, b in itertools.combinations(group, 2):
            score = char_f1(a, b, by_category=by_category)
            if score is not None:
                scores.append(score)
                owners.append(index)
    return np.array(scores, dtype=np.float64), np.array(owners, dtype=np.int64)


def labels(spans: Sequence[dict], length: int) -> list[tuple[int, int, str]]:
    """The passage as runs ``(start, end, value)`` covering ``0 … length``: the category of
    the span covering a run (the first by start, end, category where several do), else
    ``NONE``."""
    ordered = sorted(spans, key=lambda s: (s["start"], s["end"], s["category"]))
    cuts = sorted({0, length, *(s["start"] for s in spans), *(s["end"] for s in spans)})
    runs = []
    for start, end in itertools.pairwise(cuts):
        if start >= end or end > length:
            continue
        value = next((s["category"] for s in ordered if s["start"] <= start and end <= s["end"]), NONE)
        runs.append((start, end, value))
    return runs


def char_alpha(passages: Sequence[tuple[int, Sequence[Sequence[dict]]]]) -> Estimate:
    """Krippendorff's alpha (nominal) over characters. ``passages``: per passage, its length
    and each annotator's spans on it; passages with fewer than two annotators add nothing.
    Each character is a unit whose values are the annotators' labels of it (``labels``),
    and the alpha is the agreement module's (``agreement.alpha_from_value_counts``) over
    those units; a run of characters that every annotator labels alike is one row counted
    once per character. ``details``: the passages and characters compared."""
    rows: list[dict[str, int]] = []
    widths: list[int] = []
    compared = characters_compared = 0
    for length, answers in passages:
        if len(answers) < 2 or length <= 0:
            continue
        compared += 1
        characters_compared += length
        cuts = sorted({0, length, *(p for spans in answers for s in spans for p in (s["start"], s["end"]))})
        runs_of = [labels(spans, length) for spans in answers]
        for start, end in itertools.pairwise(cuts):
            if start < end:
                counts: dict[str, int] = {}
                for runs in runs_of:
                    value = _value_at(runs, start)
                    counts[value] = counts.get(value, 0) + 1
                rows.append(counts)
                widths.append(end - start)
    details = {"passages": compared, "characters": characters_compared}
    if not rows:
        return Estimate.undefined("fewer than two annotators on any passage", **details)
    domain = sorted({value for counts in rows for value in counts})
    matrix = np.array([[counts.get(value, 0) for value in domain] for counts in rows], dtype=np.float64)
    estimate = alpha_from_value_counts(np.repeat(matrix, widths, axis=0), "nominal")
    return replace(estimate, details={**estimate.details, **details})


def _value_at(runs: list[tuple[int, int, str]], position: int) -> str:
    return next(value for start, end, value in runs if start <= position < end)


def penalty(spans: Sequence[dict], weights: dict[str, float]) -> float:
    """The MQM-style penalty of one answer: the sum of its spans' severity weights."""
    return float(sum(weights[s["severity"]] for s in spans))


def error_counts(answers: Sequence[Sequence[dict]]) -> dict[tuple[str, str], int]:
    """(category, severity) → spans marked, over the answers."""
    counts: dict[tuple[str, str], int] = {}
    for spans in answers:
        for span in spans:
            key = (span["category"], span["severity"])
            counts[key] = counts.get(key, 0) + 1
    return counts
