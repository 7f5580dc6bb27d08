"""Reference Bradley-Terry figures from arena-rank (LMArena's method) for the unit tests.

arena-rank 0.1.1 pins numpy 2.3.3 and jax 0.8.1 (and pulls in datasets and pyarrow), which
conflict with this project's numpy pin, so it is not a dependency: this script runs in a
separate virtual environment and writes what it computed to
``tests/data/arena_rank_reference.json``; ``tests/unit/test_bradley_terry.py`` checks our
strengths and intervals against those numbers. To regenerate::

    python -m venv /tmp/arena && /tmp/arena/bin/pip install arena-rank==0.1.1
    /tmp/arena/bin/python bench/arena_rank_reference.py

The comparisons are seeded (numpy's default_rng), written to the file with the results, so
the test reads exactly the data arena-rank saw.
"""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "arena_rank_reference.json"
CASES = {  # name: (true strengths, comparisons, share of ties)
    "four-systems-with-ties": ([0.0, 0.4, 0.8, 1.3], 600, 0.1),
    "three-systems-no-ties": ([0.0, -0.5, 0.6], 300, 0.0),
}


def comparisons(strengths, size, ties, rng):
    """Random pairs, outcomes from the Bradley-Terry model, some turned into ties."""
    k = len(strengths)
    first = rng.integers(0, k, size)
    second = (first + rng.integers(1, k, size)) % k
    theta = np.asarray(strengths)
    p = 1 / (1 + np.exp(-(theta[first] - theta[second])))
    outcome = (rng.random(size) < p).astype(float)
    outcome[rng.random(size) < ties] = 0.5
    return first, second, outcome


def arena(first, second, outcome, k):
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.utils.data_utils import PairDataset

    names = [f"s{i}" for i in range(k)]
    winner = np.where(outcome == 1, "model_a", np.where(outcome == 0, "model_b", "tie"))
    frame = pd.DataFrame(
        {"model_a": [names[i] for i in first], "model_b": [names[i] for i in second], "winner": winner}
    )
    dataset = PairDataset.from_pandas(frame)
    model = BradleyTerry(n_competitors=len(dataset.competitors))
    result = model.compute_ratings_and_cis(dataset, significance_level=0.05, ci_method="sandwich")
    order = [dataset.competitors.index(name) for name in names]
    return {
        key: [float(result[key][i]) for i in order]
        for key in ("ratings", "rating_lower", "rating_upper", "variances")
    } | {"scale": 400 / math.log(10), "offset": 1000.0}


def main():
    rng = np.random.default_rng(20261129)
    cases = {}
    for name, (strengths, size, ties) in CASES.items():
        first, second, outcome = comparisons(strengths, size, ties, rng)
        cases[name] = {
            "systems": len(strengths),
            "first": first.tolist(),
            "second": second.tolist(),
            "outcome": outcome.tolist(),
            "arena_rank": arena(first, second, outcome, len(strengths)),
        }
    OUT.write_text(json.dumps({"arena_rank_version": "0.1.1", "cases": cases}, indent=1) + "\n")


if __name__ == "__main__":
    main()
