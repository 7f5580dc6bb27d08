"""python manage.py rate_llm — a local causal LM answers a study's items as an LLM rater."""

from __future__ import annotations

from workers.management.jobcommand import study_named
from workers.management.modelcommand import ModelCommand
from workers.management.raterjob import add_rater_arguments, rate_with_models


class Command(ModelCommand):
    help = (
        "A local causal LM answers the study's items from the page's text and the study's "
        "instructions (zero- or k-shot), stored as a model participant. Reruns add nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--model", required=True, help="a MODEL_REGISTRY name, a directory or a cached hub id"
        )
        add_rater_arguments(parser)

    def handle(self, *args, **options):
        rate_with_models(self, study_named(options["study"]), [options["model"]], options)
