"""python manage.py loaddemo — the demo studies that `make run` shows (texts of our own).

The demo is the documented example study files in ``docs/examples/``: one copy of each.
The boundary game's demo is built by ``loaddemogame`` instead, so its example is left out.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.services.studies import load_study_file

EXAMPLES_DIR = Path(settings.BASE_DIR) / "docs" / "examples"
NOT_DEMO = {"boundary.json"}  # the game's demo comes from loaddemogame


class Command(BaseCommand):
    help = "Load (or refresh) the bundled demo studies."

    def handle(self, *args, **options):
        files = [
            (path, json.loads(path.read_text(encoding="utf-8")))
            for path in sorted(EXAMPLES_DIR.glob("*.json"))
            if path.name not in NOT_DEMO
        ]
        # Qualification exams first: the studies that require one name it by its slug.
        for path, data in sorted(files, key=lambda file: "exam" not in file[1]):
            try:
                result = load_study_file(data)
            except InputError as exc:
                raise CommandError(f"{path.name}: {exc.summary()}") from None
            self.stdout.write(f"demo study {result.study.slug}: {result.study.items.count()} items")
