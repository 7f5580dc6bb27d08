"""Calibration of ``plan``: the power it predicts from a pilot against the power full
studies of that design realise when the reports analyse them.

A known model with item heterogeneity: ``cases`` sources, each shown with both systems (an
item per case and system, paired by ``provenance.source_id``), every item answered ``k``
times. An answer is ``4 + s_system + u_case + w_item + e`` with u ~ N(0, 1), w ~ N(0, 0.6²),
e ~ N(0, 1.2²); with ``--rounded`` it is then rounded and clipped to a 1-7 scale (ties and
zero differences, as real Likert answers have). With ``unpaired`` rows every item is its
own case (no source in common).

Per row:

- **planned**: ``--pilots`` pilots of ``PILOT_CASES`` cases × 3 answers are drawn from the
  model (their own difference between the systems is 0.3, which plan must ignore);
  ``stats.planning.power_table`` gives each the power of the row's design to detect the
  row's difference (on the 1-7 scale, what rounding and clipping leave of it, the
  difference in mean rating a researcher would state) at alpha 0.05; the column is their
  mean, in brackets their SD (what one pilot's estimate of the variances adds);
- **realised**: ``--studies`` full studies of the design with the row's true difference
  are simulated and analysed by the reports' own function
  (``stats.likert.system_comparisons``: Wilcoxon signed-rank on per-case means, or
  Mann-Whitney on per-item means, Holm over the question's pairs, here the identity: one
  pair); the column is the share whose Holm-adjusted p is below 0.05.

MC errors: √(p(1−p)/R) for the realised share over R studies; the planned mean's error is
the pilots' SD / √pilots (each pilot's own simulation error is part of that SD).

    .venv/bin/python bench/plan_calibration.py [--pilots 20] [--studies 4000] [--seed 20261129] [--rounded]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stats.likert import system_comparisons
from stats.planning import Answers, power_table

CASE_SD, ITEM_SD, ANSWER_SD = 1.0, 0.6, 1.2
PILOT_CASES, PILOT_ANSWERS, PILOT_DIFFERENCE = 200, 3, 0.3
ALPHA = 0.05


@dataclass(frozen=True)
class Design:
    paired: bool
    items: int  # per system (cases when paired)
    answers_per_item: int
    difference: float


DESIGNS = (
    Design(True, 30, 3, 0.5),
    Design(True, 60, 1, 0.5),
    Design(True, 15, 5, 0.7),
    Design(False, 40, 2, 0.8),
)


@dataclass(frozen=True)
class Calibration:
    design: Design
    planned: float  # mean over pilots
    planned_sd: float  # across pilots
    planned_error: float  # MC error of the mean
    realised: float
    realised_error: float


def answers(
    rng: np.random.Generator, design: Design, cases: int, k: int, difference: float, rounded: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One study from the model: every answer's value, system ("A"/"B") and case (its own
    item's number for an unpaired design)."""
    case_effect = rng.normal(0, CASE_SD, size=(cases, 2))
    if design.paired:
        case_effect[:, 1] = case_effect[:, 0]  # both systems' items show the same case
    item_mean = 4 + np.array([difference, 0.0]) + case_effect + rng.normal(0, ITEM_SD, size=(cases, 2))
    values = item_mean[:, :, None] + rng.normal(0, ANSWER_SD, size=(cases, 2, k))
    if rounded:
        values = np.clip(np.round(values), 1, 7)
    case = np.broadcast_to(np.arange(cases)[:, None, None], values.shape)
    system = np.broadcast_to(np.array(["A", "B"])[None, :, None], values.shape)
    if not design.paired:
        case = case + cases * (system == "B")  # every item its own case
    return values.ravel(), system.ravel(), case.ravel()


def pilot_answers(values, system, case) -> tuple[Answers, Answers]:
    """The pilot as ``stats.planning`` reads it: per system its values and item codes."""
    sides = []
    for name in ("A", "B"):
        mine = system == name
        sides.append(Answers(values[mine], np.unique(case[mine], return_inverse=True)[1].ravel()))
    return sides[0], sides[1]


def planned_power(
    rng: np.random.Generator, design: Design, pilots: int, simulations: int, rounded: bool
) -> np.ndarray:
    """Per pilot drawn from the model, the power ``plan`` predicts for ``design``."""
    found = []
    for _ in range(pilots):
        first, second = pilot_answers(
            *answers(rng, design, PILOT_CASES, PILOT_ANSWERS, PILOT_DIFFERENCE, rounded)
        )
        (row,) = power_table(
            first,
            second,
            difference=design.difference,
            paired=design.paired,
            alpha=ALPHA,
            items=[design.items],
            answers_per_item=[design.answers_per_item],
            simulations=simulations,
            seed=int(rng.integers(2**32)),
        )
        found.append(row.power)
    return np.array(found)


def realised_power(rng: np.random.Generator, design: Design, studies: int, rounded: bool) -> float:
    """The share of full studies of ``design`` the reports' test finds significant."""
    rejected = 0
    for _ in range(studies):
        values, system, case = answers(
            rng, design, design.items, design.answers_per_item, design.difference, rounded
        )
        (pair,) = system_comparisons(values, system, case, units=case)
        rejected += pair.p_holm < ALPHA
    return rejected / studies


def observed_difference(design: Design, rounded: bool, draws: int = 2_000_000) -> float:
    """The difference of mean ratings the model's systems truly have, in scale points: the
    model's ``difference`` itself, or on a 1-7 scale what rounding and clipping leave of it
    (the difference a researcher states and plan is asked to detect). Seeded: one number."""
    if not rounded:
        return design.difference
    rng = np.random.default_rng(0)
    latent = 4 + rng.normal(0, np.sqrt(CASE_SD**2 + ITEM_SD**2 + ANSWER_SD**2), size=draws)
    on_scale = [np.clip(np.round(latent + shift), 1, 7).mean() for shift in (design.difference, 0.0)]
    return float(on_scale[0] - on_scale[1])


def calibrate(
    design: Design, *, pilots: int, simulations: int, studies: int, seed: int, rounded: bool = False
) -> Calibration:
    rng = np.random.default_rng(seed)
    asked = Design(design.paired, design.items, design.answers_per_item, observed_difference(design, rounded))
    planned = planned_power(rng, asked, pilots, simulations, rounded)
    realised = realised_power(rng, design, studies, rounded)
    sd = float(planned.std(ddof=1)) if planned.size > 1 else 0.0
    return Calibration(
        design,
        float(planned.mean()),
        sd,
        sd / np.sqrt(planned.size),
        realised,
        float(np.sqrt(realised * (1 - realised) / studies)),
    )


def rows(quick: bool, seed: int = 20261129) -> list[dict]:
    """The family's rows in ``bench/coverage.py``'s common shape: realised − planned power
    per design (``quick``: two designs, 3 pilots × 300 simulations, 400 studies; else every
    design, 20 pilots × 2000, 4000 studies)."""
    from bench._coverage_table import result

    pilots, simulations, studies = (3, 300, 400) if quick else (20, 2000, 4000)
    found = []
    for number, design in enumerate(DESIGNS[:2] if quick else DESIGNS):
        c = calibrate(design, pilots=pilots, simulations=simulations, studies=studies, seed=seed + number)
        kind = "paired, Wilcoxon" if design.paired else "unpaired, Mann-Whitney"
        figure = f"plan: power ({kind}, {design.items} × {design.answers_per_item}, d = {design.difference})"
        error = float(np.hypot(c.planned_error, c.realised_error))
        found.append(
            result(
                "plan",
                figure,
                "ICC 0.49",
                2,
                design.items,
                studies,
                c.realised - c.planned,
                measure="power gap",
                mc_error=error,
            )
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pilots", type=int, default=20)
    parser.add_argument("--simulations", type=int, default=2000, help="plan's simulated studies per pilot")
    parser.add_argument("--studies", type=int, default=4000, help="full studies simulated per design")
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--rounded", action="store_true", help="answers on a 1-7 scale")
    args = parser.parse_args()
    print("| design | items × answers | difference | planned (pilot SD) ± MC | realised ± MC | gap |")
    print("|---|---|---|---|---|---|")
    for number, design in enumerate(DESIGNS):
        found = calibrate(
            design,
            pilots=args.pilots,
            simulations=args.simulations,
            studies=args.studies,
            seed=args.seed + number,
            rounded=args.rounded,
        )
        kind = "paired (Wilcoxon)" if design.paired else "unpaired (Mann-Whitney)"
        print(
            f"| {kind} | {design.items} × {design.answers_per_item} | "
            f"{observed_difference(design, args.rounded):.3f} | "
            f"{found.planned:.3f} ({found.planned_sd:.3f}) ± {found.planned_error:.3f} | "
            f"{found.realised:.3f} ± {found.realised_error:.3f} | {found.planned - found.realised:+.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
