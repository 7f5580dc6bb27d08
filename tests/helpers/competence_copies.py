"""The competence bootstrap by its definition: each resample's answers copied (a drawn-twice
item is two units with the same answers) and the model refitted on the copy, one resample at a
time. The reports compute the same figures without copies (``stats.competence_refits``,
``stats.competence_intervals.bootstrap_median_correlation``); the tests hold them to this."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from stats.competence import Answers


def resampled(answers: Answers, unit_counts: np.ndarray) -> Answers:
    """The answers with every unit copied ``unit_counts[unit]`` times, each copy a unit of its
    own (so a model sees a drawn-twice item as two items with the same answers)."""
    copies = unit_counts[answers.unit]
    index = np.repeat(np.arange(len(answers)), copies)
    first_copy = np.cumsum(unit_counts) - unit_counts  # new code of each unit's first copy
    block_start = np.repeat(np.cumsum(copies) - copies, copies)
    copy = np.arange(len(index)) - block_start  # which copy of its unit each new answer is
    return Answers(
        unit=first_copy[answers.unit[index]] + copy,
        annotator=answers.annotator[index],
        label=answers.label[index],
        units=int(unit_counts.sum()),
        annotators=answers.annotators,
        categories=answers.categories,
    )


def bootstrap_competence(
    answers: Answers, competence: Callable[[Answers], np.ndarray], unit_counts: np.ndarray
) -> np.ndarray:
    """Resamples × annotators: ``competence`` (a fit returning one figure per annotator, NaN
    for one without answers) on each resample of the units (rows of ``unit_counts``)."""
    return np.array([competence(resampled(answers, counts)) for counts in unit_counts]).reshape(
        len(unit_counts), answers.annotators
    )
