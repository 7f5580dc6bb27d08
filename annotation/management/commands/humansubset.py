"""python manage.py humansubset SLUG --fraction F [--system NAME=F ...] [--seed N] | --off

People answer a random subset of the study's items, a model rater every item; the reports
combine both (docs/statistics.md, "Humans and a judge combined"). Each item logs the
probability it had; the draw is fixed by the seed and the item's id.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.models import Study
from annotation.services.authoring.human_subset import set_human_subset


class Command(BaseCommand):
    help = "Draw the items people answer (the others are left to model raters), or --off: every item."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--fraction", type=float, help="each item's probability (systems not named)")
        parser.add_argument(
            "--system", action="append", default=[], metavar="NAME=F", help="a system's own probability"
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--off", action="store_true", help="no subset: people answer every item")

    def handle(self, *args, slug: str, fraction, system: list[str], seed: int, off: bool, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        raw: dict = {}
        if not off:
            raw = {"seed": seed, "by_system": dict(_pair(text) for text in system)}
            if fraction is not None:
                raw["fraction"] = fraction
        try:
            counts = set_human_subset(study=study, raw=raw)
        except InputError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.errors.items())) from None
        self.stdout.write(
            f"{slug}: people answer {counts['for_humans']} of {counts['items']} items; "
            f"{counts['for_models_only']} are left to model raters."
        )


def _pair(text: str) -> tuple[str, object]:
    name, sep, value = text.rpartition("=")
    if not sep or not name:
        raise CommandError(f"--system {text!r}: expected NAME=FRACTION.")
    try:
        return name, float(value)
    except ValueError:
        return name, value  # refused by the check, naming the field
