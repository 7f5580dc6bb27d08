"""python manage.py humansubset SLUG --fraction F [--system NAME=F ...] [--seed N] | --off

People answer a random subset of the study's items, a model rater every item; the reports
combine both (docs/statistics.md, "Humans and a judge combined"). Each item logs the
probability it had; the draw is fixed by the seed and the item's id.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError, checked
from annotation.models import Study
from annotation.services.authoring.human_subset import human_subset_counts
from annotation.services.authoring.studies import StudyFields
from annotation.services.authoring.study_changes import update_study


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
        try:  # the study's setting, checked and written as the API and the builder do
            changes = checked(StudyFields, {"human_subset": raw}, partial=True)
            update_study(study, user=None, changes=changes)
        except InputError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.errors.items())) from None
        counts = human_subset_counts(study)
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
