"""python manage.py datasheet SLUG [--format markdown|json] [--answers FILE] — the study's
Human Evaluation Datasheet (HEDS), filled from its record and saved with it
(docs/reproducibility.md)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.management.commands.loadstudy import read_json_file
from annotation.models import Study
from scoring.datasheet import as_markdown, save_datasheet


class Command(BaseCommand):
    help = (
        "Write the study's HEDS datasheet (JSON or Markdown): the questions the study's record answers "
        "filled in, the rest listed for you; the sheet (and your answers) are saved with the study."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study")
        parser.add_argument("--format", choices=["markdown", "json"], default="markdown")
        parser.add_argument(
            "--answers",
            help='a JSON file of your answers by question key ({"5.1": "Approved by …", "4.1.1:fluency": …})',
        )

    def handle(self, *args, slug: str, format: str, answers: str | None = None, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        given = read_json_file(answers) if answers else None
        if given is not None and not (
            isinstance(given, dict) and all(isinstance(v, str) for v in given.values())
        ):
            raise CommandError(f"--answers: {answers} must hold one JSON object of question key → text.")
        try:
            sheet = save_datasheet(study, answers=given)
        except InputError as exc:
            raise CommandError(f"--answers: {exc.summary()}") from None
        if format == "json":
            self.stdout.write(json.dumps(sheet, indent=1, ensure_ascii=False))
        else:
            self.stdout.write(as_markdown(sheet))
        self.stderr.write(
            f"{slug}: {sheet['filled_from_record']:.1%} filled from the study's record; "
            f"{len(sheet['to_answer'])} questions to answer: {', '.join(sheet['to_answer'])}"
        )
