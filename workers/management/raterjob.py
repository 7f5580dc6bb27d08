"""What ``rate_llm`` and ``simulate`` share: their options and one job per model."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.job_parameters import SCORING_METHODS
from annotation.models import Study
from annotation.services.jobs import create_job
from workers.management.jobcommand import input_error, run_or_queue


def add_rater_arguments(parser) -> None:
    parser.add_argument("--study", required=True, help="slug of the study to answer")
    parser.add_argument("--shots", type=int, default=0, help="examples from people's answers to other items")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--scoring",
        choices=SCORING_METHODS,
        default="logprob",
        help="logprob (default): the likeliest allowed answer; generate: a short answer, parsed",
    )
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=8, help="with --scoring generate")
    parser.add_argument("--queue", action="store_true", help="queue the jobs for a gpu worker instead")


def rate_with_models(command: BaseCommand, study: Study, models: list[str], options: dict) -> None:
    """One ``rate_llm`` job per model (one participant each), checked before any is run."""
    if not study.task_kind.answerable_by_model:
        raise CommandError(f"--study: a language model cannot answer {study.kind} items.")
    jobs = []
    try:
        for model in models:
            parameters = {
                "model": model,
                "shots": options["shots"],
                "seed": options["seed"],
                "scoring": options["scoring"],
                "batch_size": options["batch_size"],
                "max_new_tokens": options["max_new_tokens"],
            }
            jobs.append(create_job(kind="rate_llm", parameters=parameters, study=study))
    except InputError as exc:
        for job in jobs:
            job.delete()
        raise input_error(exc) from None
    for model, job in zip(models, jobs, strict=True):
        run_or_queue(command, job, queue=options["queue"], description=f"{model} on {study.slug}")
