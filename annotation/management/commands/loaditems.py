"""python manage.py loaditems SLUG FILE.csv|FILE.jsonl — add items to an existing study."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.models import Study
from annotation.services.authoring.item_files import add_items_from_file, format_of

from .loadstudy import format_errors


class Command(BaseCommand):
    help = (
        "Add items to an existing study from a CSV or JSON Lines file (docs/formats.md, 'Items file'). "
        "New ids only; all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("file", help="a .csv (header row) or .jsonl (one item a line) file")
        parser.add_argument(
            "--reason", default="", help="why a study whose plan is frozen takes items (kept as a deviation)"
        )

    def handle(self, *args, slug: str, file: str, reason: str = "", **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        try:
            file_format = format_of(file)
            with open(file, "rb") as handle:
                # read as it goes; a new version of the study (a deviation, with --reason, once frozen)
                result = add_items_from_file(study, handle, file_format=file_format, reason=reason)
        except (FileNotFoundError, IsADirectoryError):
            raise CommandError(f"{file}: no such file.") from None
        except InputError as exc:
            raise CommandError(format_errors(file, exc)) from None
        self.stdout.write(f"Added {result.added} items to {slug}.")
