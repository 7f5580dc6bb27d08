"""Krippendorff's alpha: this platform's implementation against the krippendorff package and
against the floor of any implementation, from one run (ratios hold on a busy machine).

  A. 1000 coders × 100,000 units, 5 values, 30% missing, ordinal and nominal: ours, the
     package, and the anchor: one ``np.bincount`` pass over the cells' integer codes (the
     least any counting implementation does); goal ≤ 2× the anchor;
  B. 20 coders × 10,000 units, 100 distinct values, interval: ours against the package;
  C. many distinct values, 50 coders × 10,000 units of positive ratings, 30% missing,
     rounded to 2 decimals (about 2.4k distinct values), to 3 (about 20k) and not at all
     (about 350k): interval, ordinal and ratio, time and peak memory; the anchor is the
     interval closed form straight from the cells (``np.nanvar`` per unit and overall).
     The package needs units × values² × 8 bytes there, so it is not run.

Time is the best of ``--repeat`` runs; peak memory is what tracemalloc sees NumPy allocate
during one call (the input table itself is allocated before and not counted). Values must
agree with the package to 1e-9.

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

from stats.agreement import krippendorff_alpha

MIB = 2**20


def table(coders: int, units: int, values: int, missing: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    data = rng.integers(0, values, size=(coders, units)).astype(np.float64)
    data[rng.random((coders, units)) < missing] = np.nan
    return data


def ratings(coders: int, units: int, decimals: int | None, seed: int) -> np.ndarray:
    """Positive ratings around a true value per unit (continuous when ``decimals`` is None)."""
    rng = np.random.default_rng(seed)
    data = np.abs(rng.uniform(2, 22, units)[None, :] + rng.normal(size=(coders, units)))
    if decimals is not None:
        data = np.maximum(np.round(data, decimals), 10.0**-decimals)
    data[rng.random(data.shape) < 0.3] = np.nan
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


def best_time(function, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def bincount_pass(data: np.ndarray, repeat: int) -> float:
    """Seconds of one ``np.bincount`` over the cells' integer codes (computed beforehand)."""
    codes = np.where(np.isnan(data), 5, data).astype(np.intp).ravel()
    return best_time(lambda: np.bincount(codes, minlength=6), repeat)


def interval_closed_form(data: np.ndarray) -> float:
    """Interval alpha from per-unit and overall variances of the cells: the anchor of case C."""
    counts = (~np.isnan(data)).sum(axis=0)
    pairable = data[:, counts >= 2]
    m = counts[counts >= 2]
    n = m.sum()
    observed = (2.0 * m * m * np.nanvar(pairable, axis=0) / (m - 1.0)).sum()
    return 1.0 - observed / (2.0 * n * n * np.nanvar(pairable) / (n - 1.0))


def run_against_package(name: str, data: np.ndarray, level: str, repeat: int, anchor: float | None) -> None:
    ours = measure(lambda: krippendorff_alpha(data, level).value, repeat)
    package = measure(lambda: krippendorff.alpha(data, level_of_measurement=level), repeat)
    difference = abs(ours[0] - package[0])
    print(f"{name}: {data.shape[0]} coders × {data.shape[1]} units, level {level}")
    print(f"  ours     alpha={ours[0]:.12f}  {ours[1]:8.3f} s  peak {ours[2] / MIB:8.1f} MiB")
    print(f"  package  alpha={package[0]:.12f}  {package[1]:8.3f} s  peak {package[2] / MIB:8.1f} MiB")
    print(
        f"  speed-up {package[1] / ours[1]:.1f}×, memory {package[2] / max(ours[2], 1):.1f}× less, "
        f"|difference| {difference:.1e} {'OK' if difference <= 1e-9 else 'MISMATCH'}"
    )
    if anchor is not None:
        goal = "meets" if ours[1] <= 2.0 * anchor else "misses"
        print(f"  anchor   one bincount pass {anchor:8.3f} s: ours = {ours[1] / anchor:.2f}× ({goal} ≤ 2×)")


def run_many_values(coders: int, units: int, repeat: int) -> None:
    print(f"C: {coders} coders × {units} units of positive ratings, 30% missing")
    print("  values   level       alpha            time      peak     anchor  ratio   package would need")
    for decimals, label in ((2, "2 decimals"), (3, "3 decimals"), (None, "continuous")):
        data = ratings(coders, units, decimals, seed=3)
        distinct = np.unique(data[~np.isnan(data)]).size
        anchor = best_time(lambda data=data: interval_closed_form(data), repeat)
        package_gib = units * distinct**2 * 8 / 2**30
        for level in ("interval", "ordinal", "ratio"):
            value, seconds, peak = measure(
                lambda data=data, level=level: krippendorff_alpha(data, level).value, repeat
            )
            print(
                f"  {distinct:>7} {level:<9} {value:.12f} {seconds:8.3f} s {peak / MIB:7.1f} MiB "
                f"{anchor:7.3f} s {seconds / anchor:6.1f}×  {package_gib:,.0f} GiB ({label})"
            )
        closed = interval_closed_form(data)
        ours = krippendorff_alpha(data, "interval").value
        print(f"  interval vs the closed form from the cells: |difference| {abs(ours - closed):.1e}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the units to use (quick runs)")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per implementation (best kept)")
    args = parser.parse_args()
    units_a = max(10, int(100_000 * args.scale))
    units_b = max(10, int(10_000 * args.scale))
    data = table(1000, units_a, 5, 0.3, seed=1)
    anchor = bincount_pass(data, args.repeat + 1)
    for level in ("ordinal", "nominal"):
        run_against_package("A", data, level, args.repeat, anchor)
    del data
    run_against_package("B", table(20, units_b, 100, 0.3, seed=2), "interval", args.repeat, None)
    run_many_values(50, units_b, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
