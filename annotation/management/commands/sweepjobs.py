"""python manage.py sweepjobs — requeue (or fail) jobs whose worker stopped beating, now.

The beat task ``sweep_stalled_jobs_task`` does the same every ``JOB_SWEEP_EVERY_S``; this is
for a deployment without beat, or an operator who does not want to wait.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from annotation.services.jobs import sweep_stalled_jobs


class Command(BaseCommand):
    help = "Requeue jobs whose heartbeat stopped (fail those that ran too many times)."

    def handle(self, *args, **options):
        sweep = sweep_stalled_jobs()
        self.stdout.write(
            f"Requeued {len(sweep.requeued)} stalled job(s){_ids(sweep.requeued)}; "
            f"failed {len(sweep.failed)}{_ids(sweep.failed)}."
        )


def _ids(ids: list[int]) -> str:
    return f" ({', '.join(map(str, ids))})" if ids else ""
