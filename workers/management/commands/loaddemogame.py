"""python manage.py loaddemogame — the demo's boundary-game studies, generated on the spot."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from workers.demo.game import load_demo_game


class Command(BaseCommand):
    help = "Generate and load (or refresh) the demo's boundary-game studies; idempotent."

    def handle(self, *args, **options):
        started = time.monotonic()
        try:
            results = load_demo_game()
        except InputError as exc:
            raise CommandError(exc.summary()) from None
        for result in results:
            study = result.study
            self.stdout.write(
                f"demo game {study.slug}: {study.items.count()} items "
                f"({result.items_created} new, {result.items_updated} updated)"
            )
        self.stdout.write(f"built in {time.monotonic() - started:.1f}s")
