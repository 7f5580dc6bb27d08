"""python manage.py simulate — LLM simulators answer a simulation study, one participant each."""

from __future__ import annotations

from django.core.management.base import CommandError

from workers.management.jobcommand import study_named
from workers.management.modelcommand import ModelCommand
from workers.management.raterjob import add_rater_arguments, rate_with_models


class Command(ModelCommand):
    help = (
        "Each simulator model guesses, from the same page a person sees (never the model's "
        "actual follow-up answer), what the explained model answers on each follow-up; "
        "stored as one model participant per simulator. Reruns add nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--simulator", required=True, help="MODEL[,MODEL]: registry names or directories")
        add_rater_arguments(parser)

    def handle(self, *args, **options):
        study = study_named(options["study"])
        if study.task_kind.model_rater != "simulator":
            raise CommandError(
                f"--study: {study.slug} is a {study.kind} study; simulate answers simulation studies."
            )
        simulators = [name.strip() for name in options["simulator"].split(",") if name.strip()]
        if not simulators or len(set(simulators)) != len(simulators):
            raise CommandError("--simulator: give one or more different models, separated by commas.")
        rate_with_models(self, study, simulators, options)
