"""python manage.py generate_continuations — RoFT passages from a human corpus into a boundary study."""

from __future__ import annotations

import os

from django.core.management.base import CommandError

from annotation.errors import InputError
from annotation.services.authoring.studies import ensure_study
from annotation.services.jobs import create_job
from workers.management.jobcommand import add_job_arguments, input_error, owner_named, run_or_queue
from workers.management.modelcommand import ModelCommand


class Command(ModelCommand):
    help = (
        "Keep each corpus document's first h sentences, let a model continue them, and add the "
        "passages to a boundary study (created as a draft if new). Reruns add nothing twice."
    )

    def add_arguments(self, parser):
        parser.add_argument("--corpus", required=True, help="JSONL: one {id, text, category} per line")
        add_job_arguments(parser, study_help="slug of the boundary study to fill")
        parser.add_argument("--sentences", type=int, default=10, help="sentences per passage (default 10)")
        choice = parser.add_mutually_exclusive_group()
        choice.add_argument("--p", help="nucleus values to draw from, e.g. 0.0,0.4,1.0 (0 is greedy)")
        choice.add_argument("--p-uniform", action="store_true", help="p uniform in [0, 1] (the default)")
        parser.add_argument("--all-human-share", type=float, default=0.1, help="share of all-human passages")
        parser.add_argument("--batch-size", type=int, default=8)
        parser.add_argument("--max-new-tokens", type=int, default=160)

    def handle(self, *args, **options):
        parameters = {
            "corpus": os.path.abspath(options["corpus"]),
            "model": options["model"],
            "sentences": options["sentences"],
            "p": parse_p(options["p"]),
            "seed": options["seed"],
            "all_human_share": options["all_human_share"],
            "batch_size": options["batch_size"],
            "max_new_tokens": options["max_new_tokens"],
        }
        from workers.generation.study_passages import read_corpus

        owner = owner_named(options["owner"])
        try:
            read_corpus(parameters["corpus"])
            study = ensure_study(slug=options["study"], kind="boundary", owner=owner)
            job = create_job(kind="continuations", parameters=parameters, study=study, user=owner)
        except InputError as exc:
            raise input_error(exc) from None
        run_or_queue(self, job, queue=options["queue"], description=f"passages for {study.slug}")


def parse_p(raw: str | None) -> list[float] | None:
    if not raw:
        return None
    try:
        return [float(part) for part in raw.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"--p: {raw!r} is not a comma-separated list of numbers.") from None
