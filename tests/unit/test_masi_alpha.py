"""Krippendorff's alpha with the MASI distance for set-valued answers (``stats.sets``),
against a hand computation and NLTK's independent ``AnnotationTask`` with its own
``masi_distance``."""

from __future__ import annotations

import math
import random

import pytest
from nltk.metrics.agreement import AnnotationTask
from nltk.metrics.distance import masi_distance as nltk_masi

from stats.sets import masi_alpha, masi_distance


def nltk_distance(a: frozenset, b: frozenset) -> float:
    """NLTK's MASI, with two empty sets equal (NLTK divides by their empty union)."""
    return 0.0 if a == b else nltk_masi(a, b)


def test_the_distance_is_nltks_and_passonneaus():
    assert masi_distance({"a", "b"}, {"a", "b"}) == 0.0
    assert masi_distance({"a"}, {"a", "b"}) == pytest.approx(1 - 1 / 2 * 2 / 3)  # a subset
    assert masi_distance({"a", "b"}, {"b", "c"}) == pytest.approx(1 - 1 / 3 * 1 / 3)  # overlap only
    assert masi_distance({"a"}, {"b"}) == 1.0
    assert masi_distance(set(), set()) == 0.0 and masi_distance(set(), {"a"}) == 1.0
    rng = random.Random(7)
    for _ in range(200):
        a = frozenset(rng.sample("abcdef", rng.randint(1, 4)))
        b = frozenset(rng.sample("abcdef", rng.randint(1, 4)))
        assert masi_distance(a, b) == pytest.approx(nltk_masi(a, b), abs=1e-12)


def test_a_small_example_by_hand():
    # Unit 1: {a} and {a, b} (distance 2/3); unit 2: {b} twice. D_o = (2 · 2/3) / 4 = 1/3;
    # D_e: ordered pairs of the 4 values sum to 2 (2/3 + 2 · 1 + 2 · 2/3) = 8, over 4 · 3.
    alpha = masi_alpha(["u1", "u1", "u2", "u2"], [{"a"}, {"a", "b"}, {"b"}, {"b"}])
    assert alpha.value == pytest.approx(1 - (1 / 3) / (8 / 12))
    assert (alpha.n, alpha.details["units"], alpha.details["values"]) == (4, 2, 3)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_alpha_matches_nltk_on_random_answers(seed):
    rng = random.Random(seed)
    options = ["grammar", "facts", "style", "length"]
    units, values, triples = [], [], []
    for item in range(30):
        base = frozenset(rng.sample(options, rng.randint(0, 2)))
        for coder in rng.sample(range(6), rng.randint(1, 4)):  # some items answered once
            chosen = base if rng.random() < 0.6 else frozenset(rng.sample(options, rng.randint(0, 3)))
            units.append(f"i{item}")
            values.append(chosen)
            triples.append((f"c{coder}", f"i{item}", chosen))
    ours = masi_alpha(units, values)
    theirs = AnnotationTask(data=triples, distance=nltk_distance).alpha()
    assert ours.value == pytest.approx(theirs, abs=1e-12)
    assert not math.isnan(ours.value)


def test_undefined_cases_say_why():
    assert "one item" in masi_alpha(["u", "u"], [{"a"}, {"b"}]).reason
    assert masi_alpha(["u", "u", "v", "v"], [{"a"}] * 4).reason.startswith("fewer than two distinct")
    assert masi_alpha(["u", "v"], [{"a"}, {"b"}]).reason == "no unit has two or more values"
