"""python manage.py exportstudy SLUG --format csv|jsonl|sqlite --output PATH"""

from __future__ import annotations

import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.models import Study
from annotation.services.exports.export import FORMATS, export_study


class Command(BaseCommand):
    help = (
        "Export a study: CSV or JSONL (one row per response) or a SQLite database (zipped with its README "
        "when --output ends in .zip). "
        "Participants are pseudonymised unless --include-platform-ids is given (operators only)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study's slug")
        parser.add_argument("--format", choices=list(FORMATS), required=True)
        parser.add_argument(
            "--output",
            type=Path,
            required=True,
            help="file to write (replaced if it exists); sqlite: x.sqlite or x.zip",
        )
        parser.add_argument(
            "--include-platform-ids",
            action="store_true",
            help="add the raw crowd-platform ids (shell access counts as an admin's explicit request)",
        )

    def handle(self, *args, slug: str, format: str, output: Path, include_platform_ids: bool, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        started = time.perf_counter()
        try:
            result = export_study(study, fmt=format, path=output, include_platform_ids=include_platform_ids)
        except InputError as exc:
            raise CommandError(exc.summary()) from None
        seconds = time.perf_counter() - started
        self.stdout.write(
            f"Wrote {result.rows} responses to {result.path} ({result.bytes} bytes) in {seconds:.2f} s."
        )
