"""python manage.py plan SLUG --question Q (--compare A B --difference D | --agreement-width W
| --judge-answers N (--width W | --compare A B --difference D))
— the designs a study needs, simulated from a pilot's answers that count (docs/statistics.md,
"Planning a study from a pilot")."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.models import Study
from scoring.planning import (
    DEFAULT_ALPHA,
    DEFAULT_POWER,
    AgreementPlan,
    AgreementTarget,
    ComparisonTarget,
    HybridPlan,
    HybridTarget,
    Plan,
    plan_agreement,
    plan_comparison,
    plan_hybrid,
)
from stats.planning import ANSWERS_PER_ITEM, ITEMS, SIMULATIONS

AGREEMENT_ANSWERS = (2, 3, 5)


class Command(BaseCommand):
    help = (
        "Plan a study from a pilot: for each design (items × answers per item), simulated by resampling "
        "the pilot's answers that count, the power to detect a difference between two systems on a "
        "question (--compare, --difference) or the width of the interval of the question's Krippendorff's "
        "alpha (--agreement-width), with its cost; then the cheapest design that meets the target."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the pilot study")
        parser.add_argument("--question", required=True, help="the question (a rating on a scale)")
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument(
            "--compare",
            nargs=2,
            metavar=("FIRST", "SECOND"),
            help="the two systems to compare (the items' provenance.system); needs --difference",
        )
        target.add_argument(
            "--width",
            type=float,
            metavar="W",
            help="with --judge-answers: the widest acceptable 95%% interval of the question's mean",
        )
        target.add_argument(
            "--agreement-width",
            type=float,
            metavar="W",
            help="the widest acceptable 95%% interval of the question's Krippendorff's alpha",
        )
        parser.add_argument(
            "--difference", type=float, help="the difference of mean ratings to detect (points of the scale)"
        )
        parser.add_argument(
            "--power",
            type=float,
            default=DEFAULT_POWER,
            help=f"chance of detecting it (default {DEFAULT_POWER})",
        )
        parser.add_argument(
            "--alpha",
            type=float,
            default=DEFAULT_ALPHA,
            help=f"significance level of the two-sided test (default {DEFAULT_ALPHA})",
        )
        parser.add_argument("--price", type=float, help="price per answer (the cost column)")
        parser.add_argument(
            "--items",
            type=_numbers,
            default=ITEMS,
            metavar="N,N,…",
            help=f"items (per system, when comparing) to try (default {_joined(ITEMS)})",
        )
        parser.add_argument(
            "--answers",
            type=_numbers,
            metavar="K,K,…",
            help=f"answers per item to try (default {_joined(ANSWERS_PER_ITEM)}; "
            f"for --agreement-width {_joined(AGREEMENT_ANSWERS)})",
        )
        parser.add_argument(
            "--simulations",
            type=int,
            default=SIMULATIONS,
            help=f"simulated studies per design (default {SIMULATIONS})",
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the simulation (default 0)")
        parser.add_argument(
            "--judge-answers",
            type=int,
            metavar="N",
            help="the hybrid question: beside N answers of the pilot's model rater (on items no human "
            "answers), how many human answers reach --width, or --compare's --difference with --power",
        )

    def handle(self, *args, slug: str, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        if options["width"] is not None and options["judge_answers"] is None:
            raise CommandError("--width: the width of a mean is planned beside --judge-answers N.")
        if options["agreement_width"] is not None and options["judge_answers"] is not None:
            raise CommandError("--judge-answers: plan a mean (--width) or a comparison (--compare).")
        if options["compare"] and options["difference"] is None:
            raise CommandError(
                "--difference: give the difference to detect between the systems of --compare."
            )
        try:
            if options["judge_answers"] is not None:
                lines = _hybrid(study, options)
            elif options["compare"]:
                lines = _comparison(study, options)
            else:
                lines = _agreement(study, options)
        except InputError as error:
            messages = (f"--{field}: {' '.join(texts)}" for field, texts in error.errors.items())
            raise CommandError("\n".join(messages)) from error
        self.stdout.write("\n".join(lines))


def _hybrid(study: Study, options: dict) -> list[str]:
    target = HybridTarget(
        question=options["question"],
        judge_answers=options["judge_answers"],
        width=options["width"],
        compare=tuple(options["compare"]) if options["compare"] else None,
        difference=options["difference"],
        power=options["power"],
        alpha=options["alpha"],
    )
    return hybrid_lines(study.slug, plan_hybrid(study, target))


def hybrid_lines(slug: str, plan: HybridPlan) -> list[str]:
    target, pilot, needed = plan.target, plan.pilot, plan.needed
    if target.compare is None:
        figure = f"the mean of {target.question!r} with a 95% interval at most {target.width:g} wide"
    else:
        first, second = target.compare
        figure = (
            f"a difference of {target.difference:g} between {first} and {second} on {target.question!r} "
            f"with power {target.power:g} (two-sided, alpha {target.alpha:g})"
        )

    def count(n: int | None) -> str:
        return f"{n:,}" if n is not None else "more than 10,000,000"

    lines = [
        f"Pilot {slug}: {pilot.n} human answers beside {pilot.n_judge} answers of {plan.rater}; "
        f"judge-human correlation {needed.correlation:.2f}, the judge's bias {pilot.rectifier:+.3g}.",
        f"Target: {figure}: a standard error of at most {plan.target_se:.4g}.",
        f"Beside {needed.judge:,} judge answers: {count(needed.hybrid)} human answers "
        f"(prediction-powered, lambda {needed.lam:.2f}).",
        f"Humans only: {count(needed.humans_only)} human answers.",
    ]
    if plan.saving is not None:
        lines.append(f"The judge saves {plan.saving:.0%} of the human answers.")
    lines.append(
        "Assumes the study's humans answer alike per item as the pilot's, on a random subset of the items "
        "(docs/statistics.md, 'Humans and a judge combined')."
    )
    return lines


def _comparison(study: Study, options: dict) -> list[str]:
    first, second = options["compare"]
    target = ComparisonTarget(
        first, second, options["question"], options["difference"], options["power"], options["alpha"]
    )
    plan = plan_comparison(
        study,
        target,
        price=options["price"],
        items=options["items"],
        answers_per_item=options["answers"] or ANSWERS_PER_ITEM,
        simulations=options["simulations"],
        seed=options["seed"],
    )
    return comparison_lines(study.slug, plan, simulations=options["simulations"], seed=options["seed"])


def _agreement(study: Study, options: dict) -> list[str]:
    target = AgreementTarget(options["question"], options["agreement_width"])
    plan = plan_agreement(
        study,
        target,
        price=options["price"],
        items=options["items"],
        answers_per_item=options["answers"] or AGREEMENT_ANSWERS,
        simulations=options["simulations"],
        seed=options["seed"],
    )
    return agreement_lines(study.slug, plan, simulations=options["simulations"], seed=options["seed"])


def comparison_lines(slug: str, plan: Plan, *, simulations: int, seed: int) -> list[str]:
    target = plan.target
    if plan.paired:
        by = "each answer covering both" if plan.both_on_a_page else "paired by provenance.source_id"
        pilot = f"{plan.pilot_items[0]} cases rated for both systems ({by})"
    else:
        counts = f"{plan.pilot_items[0]} items of {target.first}, {plan.pilot_items[1]} of {target.second}"
        pilot = f"{counts} (unpaired)"
    lines = [
        f"Plan from {slug}: {target.first} vs {target.second} on {target.question!r}, "
        f"difference {target.difference:g} "
        f"(two-sided test at alpha {target.alpha:g}, power {target.power:g}).",
        f"Pilot: {pilot}; {plan.pilot_answers} answers that count; "
        f"difference in the pilot {plan.pilot_difference:+.2f}.",
        f"{simulations} simulated studies per design, seed {seed}.",
        "",
        _cells("items/system", "answers/item", "answers", "power", "cost"),
    ]
    lines += [
        _cells(d.items, d.answers_per_item, d.answers, f"{d.power:.3f}", _money(d.cost)) for d in plan.table
    ]
    lines.append("")
    best = plan.best
    if best is None:
        lines.append(
            f"No design here reaches power {target.power:g}: try more items (--items) or answers (--answers)."
        )
    else:
        lines.append(
            f"Cheapest design reaching power {target.power:g}: {best.items} items per system × "
            f"{_per_item(best.answers_per_item)} = {best.answers} answers "
            f"(power {best.power:.3f}){_cost(best.cost)}."
        )
    return lines


def agreement_lines(slug: str, plan: AgreementPlan, *, simulations: int, seed: int) -> list[str]:
    target = plan.target
    lines = [
        f"Plan from {slug}: Krippendorff's alpha (interval) of {target.question!r} "
        f"with a 95% interval at most {target.width:g} wide.",
        f"Pilot: {plan.pilot_items} items, {plan.pilot_answers} answers that count."
        if plan.pilot_values <= plan.pilot_answers
        else f"Pilot: {plan.pilot_items} units (item × passage), {plan.pilot_values} ratings "
        f"from {plan.pilot_answers} answers that count.",
        f"{simulations} simulated studies per design, seed {seed}.",
        "",
        _cells("items", "answers/item", "answers", "width", "alpha", "cost"),
    ]
    lines += [
        _cells(d.items, d.answers_per_item, d.answers, f"{d.width:.3f}", f"{d.alpha:.3f}", _money(d.cost))
        for d in plan.table
    ]
    lines.append("")
    best = plan.best
    if best is None:
        lines.append("No design here is narrow enough: try more items (--items) or answers (--answers).")
    else:
        lines.append(
            f"Cheapest design at most {target.width:g} wide: {best.items} items × "
            f"{_per_item(best.answers_per_item)} = {best.answers} answers "
            f"(width {best.width:.3f}){_cost(best.cost)}."
        )
    return lines


def _cells(*cells) -> str:
    return "  ".join(f"{cell:>12}" for cell in cells)


def _money(cost: float | None) -> str:
    return "" if cost is None else f"{cost:.2f}"


def _cost(cost: float | None) -> str:
    return "" if cost is None else f", cost {cost:.2f}"


def _per_item(count: int) -> str:
    return f"{count} answer per item" if count == 1 else f"{count} answers per item"


def _numbers(text: str) -> list[int]:
    """``"10,20,50"`` → [10, 20, 50] (argparse names the option when this raises)."""
    try:
        return sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError as error:
        raise ValueError(f"not a list of whole numbers: {text!r}") from error


def _joined(numbers) -> str:
    return ",".join(map(str, numbers))
