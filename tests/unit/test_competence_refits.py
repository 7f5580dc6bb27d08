"""The batched bootstrap refits equal refitting each resample's copied answers one by one."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from stats import competence_refits
from stats.competence import Answers, dawid_skene, mace
from stats.competence_intervals import item_resamples
from stats.competence_refits import bootstrap_dawid_skene, bootstrap_mace
from tests.helpers.competence_copies import bootstrap_competence


def random_answers(rng: np.random.Generator) -> Answers:
    """Items answered by a random subset of annotators of mixed skill: some annotators have few
    answers, so that resamples leave them out (NaN) now and then."""
    units, annotators, categories = int(rng.integers(6, 30)), int(rng.integers(2, 6)), int(rng.integers(2, 5))
    truth = rng.integers(0, categories, units)
    skill = rng.uniform(0.2, 0.95, annotators)
    rows = []
    for unit in range(units):
        for annotator in rng.choice(annotators, size=int(rng.integers(1, annotators + 1)), replace=False):
            right = rng.random() < skill[annotator]
            rows.append((unit, annotator, truth[unit] if right else rng.integers(0, categories)))
    rows.append((0, annotators, truth[0]))  # an annotator of one item, absent from many resamples
    unit, annotator, label = np.array(rows).T
    return Answers.of(unit, annotator, label, units=units, annotators=annotators + 1, categories=categories)


def assert_same(batched: np.ndarray, one_by_one: np.ndarray) -> None:
    assert batched.shape == one_by_one.shape
    np.testing.assert_array_equal(np.isnan(batched), np.isnan(one_by_one))
    np.testing.assert_allclose(batched, one_by_one, rtol=0, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("chunk_rows", [competence_refits.CHUNK_ROWS, 50])
def test_batched_refits_equal_refits_of_copied_answers(monkeypatch, chunk_rows):
    """Five random designs, 20 resamples each, in one stack and in chunks of a few
    resamples: Dawid–Skene's and MACE's competences (from the whole fit, and from seeded
    random restarts) equal those of ``dawid_skene`` and ``mace`` on each resample's copies,
    NaN at the same places."""
    monkeypatch.setattr(competence_refits, "CHUNK_ROWS", chunk_rows)
    rng = np.random.default_rng(11)
    left_out = 0
    for design in range(5):
        answers = random_answers(rng)
        counts = item_resamples(answers.units, resamples=20, seed=design)
        one_by_one = bootstrap_competence(answers, lambda a: dawid_skene(a).competence, counts)
        assert_same(bootstrap_dawid_skene(answers, counts), one_by_one)
        whole = mace(answers, restarts=2)
        for settings in (
            {"start": whole, "tolerance": 1e-4},
            {"seed": design, "restarts": 2, "tolerance": 1e-5},
        ):
            one_by_one_mace = bootstrap_competence(answers, partial(_mace_competence, **settings), counts)
            assert_same(bootstrap_mace(answers, counts, **settings), one_by_one_mace)
        left_out += int(np.isnan(one_by_one).sum())
    assert left_out > 0  # some resample drew none of an annotator's items


def _mace_competence(answers: Answers, **settings) -> np.ndarray:
    return mace(answers, **settings).competence


def test_no_resamples_give_no_rows():
    answers = Answers.of([0, 0, 1, 1], [0, 1, 0, 1], [0, 1, 1, 1])
    empty = np.zeros((0, answers.units), dtype=np.int64)
    assert bootstrap_dawid_skene(answers, empty).shape == (0, 2)
    assert bootstrap_mace(answers, empty, tolerance=1e-4).shape == (0, 2)
