"""python manage.py importresponses SLUG FILE.jsonl — import answers collected elsewhere."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.models import Participant, Study
from annotation.services.authoring.answer_imports import import_responses

from .loadstudy import format_errors


class Command(BaseCommand):
    help = "Import responses, one JSON object a line (docs/formats.md). Idempotent; all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("file")
        parser.add_argument("--source", default=Participant.Source.LAB, choices=Participant.Source.values)
        parser.add_argument(
            "--allow-incomplete",
            action="store_true",
            help="import answers that lack a part (a label without its evidence), marked incomplete",
        )

    def handle(self, *args, slug: str, file: str, source: str, allow_incomplete: bool, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        try:
            with open(file, encoding="utf-8") as handle:
                result = import_responses(study, handle, source=source, allow_incomplete=allow_incomplete)
        except FileNotFoundError:
            raise CommandError(f"{file}: no such file.") from None
        except InputError as exc:
            raise CommandError(format_errors(file, exc)) from None
        self.stdout.write(f"Imported {result.created} responses into {slug}; {result.skipped} already there.")
        if result.incomplete:
            parts = ", ".join(f"{count} without {part}" for part, count in sorted(result.incomplete.items()))
            self.stdout.write(f"Incomplete (left out of the figures that need the missing part): {parts}.")
