"""python manage.py rate — a saved trained rater answers a study's items it has not answered."""

from __future__ import annotations

import os

from annotation.errors import InputError
from annotation.services.jobs import create_job
from workers.management.jobcommand import input_error, owner_named, run_or_queue, study_named
from workers.management.modelcommand import ModelCommand


class Command(ModelCommand):
    help = (
        "Answer the study's unanswered items (new ones included) as a trained rater saved by "
        "train_rater: a model participant, validated by the kind; a rerun adds nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--study", required=True, help="slug of the study to answer")
        parser.add_argument("--rater", required=True, help="a rater directory written by train_rater")
        parser.add_argument("--owner", help="username the job is recorded for")
        parser.add_argument("--queue", action="store_true", help="queue the job for a gpu worker instead")
        parser.add_argument("--json", action="store_true", help="print the summary as one JSON line, last")

    def handle(self, *args, **options):
        study = study_named(options["study"])
        owner = owner_named(options["owner"])
        try:
            job = create_job(
                kind="rate", parameters={"rater": os.path.abspath(options["rater"])}, study=study, user=owner
            )
        except InputError as exc:
            raise input_error(exc) from None
        run_or_queue(
            self, job, queue=options["queue"], description=f"rating {study.slug}", as_json=options["json"]
        )
