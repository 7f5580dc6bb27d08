"""python manage.py edit_and_generate — edited-model passages into a likert, ranking or claim study."""

from __future__ import annotations

import os

from django.core.management.base import CommandError

from annotation.errors import InputError
from annotation.job_parameters import EDIT_STUDY_KINDS
from annotation.models import Study
from annotation.services.authoring.studies import ensure_study
from annotation.services.jobs import create_job
from workers.management.jobcommand import add_job_arguments, input_error, owner_named, run_or_queue
from workers.management.modelcommand import ModelCommand


class Command(ModelCommand):
    help = (
        "For each edit request and method: edit the model, write a main and a related passage, "
        "undo the edit; add the passages to the study as likert, ranking or claim items. "
        "Reruns add nothing twice."
    )

    def add_arguments(self, parser):
        parser.add_argument("--requests", required=True, help="JSONL of edit requests (CounterFact records)")
        add_job_arguments(parser, study_help="slug of the study to fill")
        parser.add_argument("--methods", default="none,ike,ft,rome,memit", help="comma-separated methods")
        parser.add_argument("--kind", choices=EDIT_STUDY_KINDS, help="needed to create a new study")
        parser.add_argument("--top-k", type=int, default=50)
        parser.add_argument("--top-p", type=float, default=0.95)
        parser.add_argument("--temperature", type=float, default=0.9)
        parser.add_argument("--max-new-tokens", type=int, default=120)
        parser.add_argument("--hparams-dir", help="a directory of hyperparameter files searched first")

    def handle(self, *args, **options):
        parameters = {
            "requests": os.path.abspath(options["requests"]),
            "model": options["model"],
            "methods": [m.strip() for m in options["methods"].split(",") if m.strip()],
            "kind": options["kind"],
            "seed": options["seed"],
            "top_k": options["top_k"],
            "top_p": options["top_p"],
            "temperature": options["temperature"],
            "max_new_tokens": options["max_new_tokens"],
            "hparams_dir": os.path.abspath(options["hparams_dir"]) if options["hparams_dir"] else None,
        }
        from workers.editing.hparams import HparamsError, check_hparams_dir
        from workers.editing.requests import read_edit_requests

        if parameters["hparams_dir"]:
            try:
                check_hparams_dir(parameters["hparams_dir"], parameters["methods"])
            except HparamsError as exc:
                raise CommandError(f"--hparams-dir: {exc}") from None
        owner = owner_named(options["owner"])
        try:
            read_edit_requests(parameters["requests"])
            study = self.target_study(options["study"], options["kind"], owner)
            job = create_job(kind="edit_and_generate", parameters=parameters, study=study, user=owner)
        except InputError as exc:
            raise input_error(exc) from None
        run_or_queue(self, job, queue=options["queue"], description=f"edited passages for {study.slug}")

    @staticmethod
    def target_study(slug: str, kind: str | None, owner) -> Study:
        if kind:
            return ensure_study(slug=slug, kind=kind, owner=owner)
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"--study: there is no study {slug!r}; give --kind to create it.")
        return study
