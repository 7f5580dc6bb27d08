"""python manage.py train_mend — train MEND's editor networks for one model on edit requests."""

from __future__ import annotations

import os

from django.core.management.base import CommandError

from annotation.errors import InputError
from annotation.services.jobs import create_job
from workers.management.jobcommand import input_error, owner_named, run_or_queue
from workers.management.modelcommand import ModelCommand

# Options whose value the job takes as it is; left out, the job's default holds (one place:
# annotation.job_parameters.TrainMendParameters).
TUNING = {
    "rank": int,
    "hidden": int,
    "lr": float,
    "edit_lr": float,
    "edit_weight": float,
    "locality_weight": float,
    "grad_clip": float,
    "held_out_share": float,
}


class Command(ModelCommand):
    help = (
        "Train MEND's gradient-transforming networks for a model on edit requests (CounterFact "
        "records with paraphrases and neighbourhood prompts); save them with definition.json "
        "(model, layers, data digest, settings, held-out efficacy and locality) in --output."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--model", required=True, help="a MODEL_REGISTRY name, a directory or a cached hub id"
        )
        parser.add_argument(
            "--data", required=True, help="JSONL of edit requests to train on (a share held out)"
        )
        parser.add_argument("--output", required=True, help="directory for the editor (new or empty)")
        parser.add_argument("--layers", help="comma-separated layers to edit (default: the last three)")
        parser.add_argument("--modules", help="mlp_in and/or mlp_out, comma-separated (default: both)")
        parser.add_argument("--steps", type=int, help="training edits (default 10000)")
        parser.add_argument("--seed", type=int, default=0)
        for name, kind in TUNING.items():
            parser.add_argument(f"--{name.replace('_', '-')}", type=kind, help="see docs/workers.md (MEND)")
        parser.add_argument("--owner", help="username the job is recorded for")
        parser.add_argument("--queue", action="store_true", help="queue the job for a gpu worker instead")
        parser.add_argument("--json", action="store_true", help="print the result as one JSON line, last")

    def handle(self, *args, **options):
        parameters = {
            "model": options["model"],
            "requests": os.path.abspath(options["data"]),
            "output": os.path.abspath(options["output"]),
            "seed": options["seed"],
            "layers": _integers(options["layers"], "--layers"),
        }
        if options["modules"]:
            parameters["modules"] = [m.strip() for m in options["modules"].split(",") if m.strip()]
        if options["steps"] is not None:
            parameters["steps"] = options["steps"]
        parameters |= {name: options[name] for name in TUNING if options[name] is not None}
        from workers.editing.mend_training import check_output
        from workers.editing.requests import read_edit_requests

        owner = owner_named(options["owner"])
        try:
            read_edit_requests(parameters["requests"], parameter="data")
            check_output(parameters["output"])
            job = create_job(kind="train_mend", parameters=parameters, user=owner)
        except InputError as exc:
            raise input_error(exc) from None
        run_or_queue(
            self,
            job,
            queue=options["queue"],
            description=f"training MEND for {options['model']}",
            as_json=options["json"],
        )


def _integers(text: str | None, option: str) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"{option}: a comma-separated list of layer numbers, not {text!r}.") from None
