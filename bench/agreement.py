"""Krippendorff's alpha: this platform's implementation against the krippendorff package.

Two cases from the issue, each timed and memory-measured for both implementations in the
same run (so the ratios hold on a busy machine):

  A. 1000 coders × 100,000 units, 5 values, 30% missing (ordinal);
  B. 10,000 units × 100 distinct values, 20 coders, 30% missing (interval).

Time is the best of ``--repeat`` runs; peak memory is what tracemalloc sees NumPy allocate
during one call (the input table itself is allocated before and not counted). The
values must agree to 1e-9.

    .venv/bin/python bench/agreement.py [--scale 0.1] [--repeat 2]
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import krippendorff
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scoring.agreement import krippendorff_alpha


def table(coders: int, units: int, values: int, missing: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    data = rng.integers(0, values, size=(coders, units)).astype(np.float64)
    data[rng.random((coders, units)) < missing] = np.nan
    return data


def measure(function, repeat: int) -> tuple[float, float, int]:
    """(value, best seconds, peak bytes)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        value = function()
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    tracemalloc.reset_peak()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return float(value), best, peak


def run_case(name: str, data: np.ndarray, level: str, repeat: int) -> None:
    ours = measure(lambda: krippendorff_alpha(data, level).value, repeat)
    package = measure(lambda: krippendorff.alpha(data, level_of_measurement=level), repeat)
    difference = abs(ours[0] - package[0])
    print(f"{name}: {data.shape[0]} coders × {data.shape[1]} units, level {level}")
    print(f"  ours     alpha={ours[0]:.12f}  {ours[1]:8.3f} s  peak {ours[2] / 2**20:8.1f} MiB")
    print(f"  package  alpha={package[0]:.12f}  {package[1]:8.3f} s  peak {package[2] / 2**20:8.1f} MiB")
    print(
        f"  speed-up {package[1] / ours[1]:.1f}×, memory {package[2] / max(ours[2], 1):.1f}× less, "
        f"|difference| {difference:.1e} {'OK' if difference <= 1e-9 else 'MISMATCH'}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the units to use (quick runs)")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per implementation (best kept)")
    args = parser.parse_args()
    units_a = max(10, int(100_000 * args.scale))
    units_b = max(10, int(10_000 * args.scale))
    run_case("A", table(1000, units_a, 5, 0.3, seed=1), "ordinal", args.repeat)
    run_case("B", table(20, units_b, 100, 0.3, seed=2), "interval", args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
