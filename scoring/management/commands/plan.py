"""python manage.py plan SLUG --compare A B --question Q --difference D [--power P]
[--alpha A] [--price X] — the designs a study needs, simulated from a pilot's answers."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.models import Study
from scoring.planning import ComparisonTarget, Plan, plan_comparison
from stats.planning import ANSWERS_PER_ITEM, ITEMS, SIMULATIONS, DesignPower


class Command(BaseCommand):
    help = (
        "Plan a study from a pilot: the power of each design (items per system × answers per item) "
        "to detect a difference between two systems on a question, simulated by resampling the pilot's "
        "answers that count, with its cost, and the cheapest design that reaches the power."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the pilot study")
        parser.add_argument(
            "--compare",
            nargs=2,
            metavar=("FIRST", "SECOND"),
            required=True,
            help="the two systems (the items' provenance.system)",
        )
        parser.add_argument("--question", required=True, help="the question (a rating on a scale)")
        parser.add_argument(
            "--difference",
            type=float,
            required=True,
            help="the difference of mean ratings to detect (points of the scale)",
        )
        parser.add_argument("--power", type=float, default=0.8, help="chance of detecting it (default 0.8)")
        parser.add_argument(
            "--alpha",
            type=float,
            default=0.05,
            help="significance level of the two-sided test (default 0.05)",
        )
        parser.add_argument("--price", type=float, help="price per answer (the cost column)")
        parser.add_argument(
            "--items",
            type=_numbers,
            default=ITEMS,
            metavar="N,N,…",
            help=f"items per system to try (default {_joined(ITEMS)})",
        )
        parser.add_argument(
            "--answers",
            type=_numbers,
            default=ANSWERS_PER_ITEM,
            metavar="K,K,…",
            help=f"answers per item to try (default {_joined(ANSWERS_PER_ITEM)})",
        )
        parser.add_argument(
            "--simulations",
            type=int,
            default=SIMULATIONS,
            help=f"simulated studies per design (default {SIMULATIONS})",
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the simulation (default 0)")

    def handle(
        self,
        *args,
        slug,
        compare,
        question,
        difference,
        power,
        alpha,
        price,
        items,
        answers,
        simulations,
        seed,
        **options,
    ):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        if simulations < 100:
            raise CommandError("--simulations: at least 100 simulated studies per design.")
        target = ComparisonTarget(compare[0], compare[1], question, difference, power, alpha)
        try:
            plan = plan_comparison(
                study,
                target,
                price=price,
                items=items,
                answers_per_item=answers,
                simulations=simulations,
                seed=seed,
            )
        except InputError as error:
            raise CommandError(
                "\n".join(f"--{field}: {' '.join(messages)}" for field, messages in error.errors.items())
            ) from error
        self.stdout.write("\n".join(report_lines(study.slug, plan, simulations=simulations, seed=seed)))


def report_lines(slug: str, plan: Plan, *, simulations: int, seed: int) -> list[str]:
    target = plan.target
    pilot = (
        f"{plan.pilot_items[0]} cases rated for both systems (paired by provenance.source_id)"
        if plan.paired
        else f"{plan.pilot_items[0]} items of {target.first}, "
        f"{plan.pilot_items[1]} of {target.second} (unpaired)"
    )
    lines = [
        f"Plan from {slug}: {target.first} vs {target.second} on {target.question!r}, "
        f"difference {target.difference:g} "
        f"(two-sided test at alpha {target.alpha:g}, power {target.power:g}).",
        f"Pilot: {pilot}; {plan.pilot_answers} answers that count; "
        f"difference in the pilot {plan.pilot_difference:+.2f}.",
        f"{simulations} simulated studies per design, seed {seed}.",
        "",
        f"{'items/system':>12}  {'answers/item':>12}  {'answers':>8}  {'power':>6}  {'cost':>10}",
    ]
    lines += [_row(design) for design in plan.table]
    lines.append("")
    best = plan.best
    if best is None:
        lines.append(
            f"No design here reaches power {target.power:g}: try more items (--items) or answers (--answers)."
        )
    else:
        cost = "" if best.cost is None else f", cost {best.cost:.2f}"
        lines.append(
            f"Cheapest design reaching power {target.power:g}: {best.items} items per system × "
            f"{_answers_per_item(best.answers_per_item)} = {best.answers} answers "
            f"(power {best.power:.3f}){cost}."
        )
    return lines


def _row(design: DesignPower) -> str:
    cost = "" if design.cost is None else f"{design.cost:.2f}"
    cells = (f"{design.items:>12}", f"{design.answers_per_item:>12}", f"{design.answers:>8}")
    return "  ".join((*cells, f"{design.power:>6.3f}", f"{cost:>10}"))


def _answers_per_item(count: int) -> str:
    return f"{count} answer per item" if count == 1 else f"{count} answers per item"


def _numbers(text: str) -> list[int]:
    """``"10,20,50"`` → [10, 20, 50] (argparse names the option when this raises)."""
    try:
        return sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError as error:
        raise ValueError(f"not a list of whole numbers: {text!r}") from error


def _joined(numbers) -> str:
    return ",".join(map(str, numbers))
