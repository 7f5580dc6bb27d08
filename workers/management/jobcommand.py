"""What the job commands share: make the job row, run it here with a progress bar (or queue it), report."""

from __future__ import annotations

import json

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from annotation.errors import InputError
from annotation.models import Job, Study
from annotation.services.jobs import queue_job


def add_job_arguments(parser, *, study_help: str) -> None:
    """The arguments every generation command takes: the model, the study, the owner, --queue."""
    parser.add_argument(
        "--model", required=True, help="a MODEL_REGISTRY name, a directory or a cached hub id"
    )
    parser.add_argument("--study", required=True, help=study_help)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--owner", help="username owning the study if it is created")
    parser.add_argument("--queue", action="store_true", help="queue the job for a gpu worker instead")


def input_error(exc: InputError, what: str = "nothing was written") -> CommandError:
    lines = [f"{what}; fix these errors:"]
    lines += [f"  {field}: {' '.join(messages)}" for field, messages in exc.errors.items()]
    return CommandError("\n".join(lines))


def study_named(slug: str) -> Study:
    """The study a command's ``--study`` names; a clear error naming the option otherwise."""
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        raise CommandError(f"--study: there is no study {slug!r}.")
    return study


def owner_named(username: str | None):
    if not username:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"--owner: no user named {username!r}.")
    return user


def run_or_queue(command, job: Job, *, queue: bool, description: str, as_json: bool = False) -> None:
    """Queue the job for a worker, or run it in this process and print how it ended
    (``as_json``: its result alone, as one JSON line, the last thing printed)."""
    if queue:
        queue_job(job)
        command.stdout.write(f"Queued {job.kind} job {job.pk}; follow it on /research/jobs/.")
        return
    from workers.progress import run_job_here

    job = run_job_here(job, description=description, stream=command.stderr)
    if job.status == Job.Status.FAILED:
        raise CommandError(f"{job.kind} job {job.pk} failed: {job.error.split(chr(10) * 2)[0]}")
    if job.status == Job.Status.CANCELLED:
        raise CommandError(f"{job.kind} job {job.pk} was cancelled.")
    if as_json:
        command.stdout.write(json.dumps(job.result, sort_keys=True))
        return
    command.stdout.write(f"{job.kind} job {job.pk} done: {json.dumps(job.result, sort_keys=True)}")
