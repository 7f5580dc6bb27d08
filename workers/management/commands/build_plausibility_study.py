"""python manage.py build_plausibility_study — explanations of questions with gold, as plausibility items."""

from __future__ import annotations

from workers.management.modelcommand import ModelCommand

from .build_simulation_study import add_simulatability_arguments, common_parameters, start


class Command(ModelCommand):
    help = (
        "Explain each question with the explaining model (cot and/or posthoc; the explanations the "
        "simulation chain stores are reused) and add one plausibility item per question with a gold "
        "answer to the study (a draft if new). Reruns add nothing twice."
    )

    def add_arguments(self, parser):
        add_simulatability_arguments(parser, study_help="slug of the plausibility study to fill")

    def handle(self, *args, **options):
        start(
            self,
            kind="build_plausibility_study",
            study_kind="plausibility",
            parameters=common_parameters(options),
            options=options,
        )
