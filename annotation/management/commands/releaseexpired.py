"""python manage.py releaseexpired: give back the slots of pages past their time, once.

Celery beat does this every RELEASE_EXPIRED_EVERY_SECONDS; the command is for a deployment
without beat (cron) and for operators. Participant requests no longer sweep a study.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from annotation.services.participation.assignment import release_expired_assignments


class Command(BaseCommand):
    help = "Mark unanswered pages past their time as expired and free their items' slots."

    def handle(self, *args, **options):
        released = release_expired_assignments()
        self.stdout.write(f"Released {released} expired page(s).")
