"""python manage.py build_simulation_study — questions to a live-ready simulation study (seed 001)."""

from __future__ import annotations

import os

from django.core.management.base import CommandError

from annotation.errors import InputError
from annotation.services.authoring.studies import ensure_study
from annotation.services.jobs import create_job
from workers.management.jobcommand import input_error, owner_named, run_or_queue
from workers.management.modelcommand import ModelCommand


def add_simulatability_arguments(parser, *, study_help: str) -> None:
    """What both simulatability builders take: questions, explainer, modes, study, seed, owner."""
    parser.add_argument("--questions", required=True, help="JSONL: one question per line (docs/formats.md)")
    parser.add_argument(
        "--explainer", required=True, help="the explaining model (registry name or directory)"
    )
    parser.add_argument("--modes", default="cot,posthoc", help="cot, posthoc or both (default cot,posthoc)")
    parser.add_argument("--study", required=True, help=study_help)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=160, help="for explanations and answers")
    parser.add_argument("--owner", help="username owning the study if it is created")
    parser.add_argument("--queue", action="store_true", help="queue the job for a gpu worker instead")


def common_parameters(options: dict) -> dict:
    return {
        "questions": os.path.abspath(options["questions"]),
        "explainer": options["explainer"],
        "modes": split_list(options["modes"]),
        "seed": options["seed"],
        "batch_size": options["batch_size"],
        "max_new_tokens": options["max_new_tokens"],
    }


def start(command, *, kind: str, study_kind: str, parameters: dict, options: dict) -> None:
    """Check the question file, make the study (a draft if new) and the job; run or queue it."""
    from workers.simulatability.questions import read_questions

    owner = owner_named(options["owner"])
    try:
        read_questions(parameters["questions"])
        study = ensure_study(slug=options["study"], kind=study_kind, owner=owner)
        job = create_job(kind=kind, parameters=parameters, study=study, user=owner)
    except InputError as exc:
        raise input_error(exc) from None
    run_or_queue(command, job, queue=options["queue"], description=f"{kind} for {study.slug}")


def split_list(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


class Command(ModelCommand):
    help = (
        "Explain each question with the explaining model (cot and/or posthoc), let the generators "
        "write n follow-ups per explanation (duplicates removed), let the explaining model answer "
        "them, and add one simulation item per follow-up to the study (a draft if new). Reruns add "
        "nothing twice. Model simulators answer the items afterwards (the simulate command)."
    )

    def add_arguments(self, parser):
        add_simulatability_arguments(parser, study_help="slug of the simulation study to fill")
        parser.add_argument("--generators", required=True, help="models writing follow-ups, comma-separated")
        parser.add_argument("--n", type=int, default=10, help="follow-ups per explanation and generator")
        parser.add_argument("--similarity-threshold", type=float, default=0.9, help="near-duplicate cosine")
        parser.add_argument("--top-p", type=float, default=0.95, help="follow-up sampling (0: greedy)")
        parser.add_argument("--temperature", type=float, default=1.0)
        parser.add_argument("--followup-max-new-tokens", type=int, default=120)

    def handle(self, *args, **options):
        generators = split_list(options["generators"])
        if not generators:
            raise CommandError("--generators: name at least one model.")
        parameters = common_parameters(options) | {
            "generators": generators,
            "n": options["n"],
            "similarity_threshold": options["similarity_threshold"],
            "top_p": options["top_p"],
            "temperature": options["temperature"],
            "followup_max_new_tokens": options["followup_max_new_tokens"],
        }
        start(
            self,
            kind="build_simulation_study",
            study_kind="simulation",
            parameters=parameters,
            options=options,
        )
        # Step 3 for machines: the model simulators answer these items as `model` participants.
        self.stdout.write(
            f"Next: set {options['study']} live for people; "
            f"model simulators: python manage.py simulate --study {options['study']} --simulator MODEL"
        )
