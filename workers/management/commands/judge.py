"""python manage.py judge — an LLM judge behind an OpenAI-compatible endpoint answers a study."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.services.jobs import create_job
from workers.management.jobcommand import input_error, owner_named, run_or_queue, study_named


class Command(BaseCommand):
    help = (
        "A model behind an OpenAI-compatible endpoint (hosted, vLLM, Ollama) answers the study's "
        "items as a judge: k samples per question, pairwise picks in both orders, every exchange "
        "cached (a rerun sends nothing), nothing sent above --token-cap. docs/workers.md."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="slug of the study to judge")
        parser.add_argument("--base-url", required=True, help="the endpoint, e.g. http://127.0.0.1:8000/v1")
        parser.add_argument("--model", required=True, help="the model name the endpoint knows")
        parser.add_argument("--samples", type=int, default=3, help="replies per question (k)")
        parser.add_argument("--temperature", type=float, default=0.7)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--shots", type=int, default=0, help="examples from people's answers to other items"
        )
        parser.add_argument("--max-tokens", type=int, default=16)
        parser.add_argument("--token-cap", type=int, default=1_000_000, help="refuse above this estimate")
        parser.add_argument(
            "--no-swap", action="store_true", help="ask pairwise picks in the drawn order only"
        )
        parser.add_argument("--owner", help="the researcher whose stored key for the endpoint is sent")
        parser.add_argument("--queue", action="store_true", help="queue the job for a worker instead")

    def handle(self, *args, **options):
        study = study_named(options["study"])
        if not study.task_kind.answerable_by_model:
            raise CommandError(f"--study: a language model cannot answer {study.kind} items.")
        parameters = {
            "base_url": options["base_url"],
            "model": options["model"],
            "samples": options["samples"],
            "temperature": options["temperature"],
            "seed": options["seed"],
            "shots": options["shots"],
            "max_tokens": options["max_tokens"],
            "token_cap": options["token_cap"],
            "swap": not options["no_swap"],
        }
        owner = owner_named(options["owner"])
        try:
            job = create_job(kind="judge", parameters=parameters, study=study)
        except InputError as exc:
            raise input_error(exc) from None
        if owner is not None:
            job.created_by = owner
            job.save(update_fields=["created_by"])
        description = f"{options['model']} on {study.slug}"
        run_or_queue(self, job, queue=options["queue"], description=description)
