"""python manage.py loaddemo — the demo studies that `make run` shows (texts of our own),
with seeded lab answers and their reports (``workers.demo.studies``)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from workers.demo.studies import demo_study_files, load_demo_study


class Command(BaseCommand):
    help = "Load (or refresh) the bundled demo studies, their seeded answers and reports."

    def handle(self, *args, **options):
        for path, data in demo_study_files():
            try:
                demo = load_demo_study(data)
            except InputError as exc:
                raise CommandError(f"{path.name}: {exc.summary()}") from None
            line = f"demo study {demo.study.slug}: {demo.study.items.count()} items"
            if demo.answers is not None:
                imported, skipped = demo.answers.created, demo.answers.skipped
                line += f", {imported} seeded answers imported ({skipped} already there)"
            if demo.reports is not None:
                line += f", {demo.reports} report rows computed"
            self.stdout.write(line)
