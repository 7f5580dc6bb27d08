"""A small seeded slice of ``bench/adaptive.py``'s system ranking (part B), the measurement
behind refusing adaptive assignment for studies that only rank systems
(``annotation.services.participation.adaptive.RANKING_REFUSED``): the platform's priority saves nowhere
near the 15% of uniform's answers that would pay for it. The full figures (200 seeds) are in
docs/statistics.md ("Adaptive collection")."""

from __future__ import annotations

import numpy as np
import pytest

from bench.adaptive import RANKING_PRIORITIES, Design, PairStudy, savings

DESIGN = Design(items=80, answers=5, minimum=2, cap=10, every=20)


@pytest.mark.parametrize("priority", sorted(RANKING_PRIORITIES))
def test_adaptive_ranking_does_not_save_fifteen_percent(priority):
    """12 seeded studies of 8 systems: the mean saving stays below 15% for the platform's
    priority and for both alternatives measured beside it."""
    target, saved = savings(lambda rng: PairStudy(80, 8, rng, 1.0, priority), DESIGN, seeds=12)
    assert 0.5 < target < 1
    assert np.mean(saved) < 0.15
