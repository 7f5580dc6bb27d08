"""Starting background jobs and moving them through their states.

The web process queues a job by its kind's task *name* (it never imports the workers'
modules, which may need torch); each kind names its Celery task and queue below. Every
state change is a conditional UPDATE, so a task redelivered after a worker died, or a
cancelled job, is recognised and left alone.
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
import threading
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from datetime import timedelta
from typing import Any, ClassVar, Protocol, Self

from django.conf import settings
from django.db import connections, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from rest_framework import serializers
from rest_framework.fields import empty

from annotation.errors import InputError, checked
from annotation.kinds.base import StrictSerializer
from annotation.models import Job, Study
from annotation.services.access import researcher_jobs
from roft_site.celery import DEFAULT_QUEUE, QUEUES


class Progress(Protocol):
    """The one progress callback every job body takes: ``progress(done, total=None, message="")``.

    On a worker it is ``workers.progress.JobProgress``, which records the step on the job's
    row and raises ``JobCancelled`` once the job was cancelled; elsewhere ``no_progress``.
    """

    def __call__(self, done: int, total: int | None = None, message: str = "") -> None: ...


class JobCancelled(Exception):
    """The job was cancelled: raised by the progress callback, so the work stops at its next step."""


def no_progress(done: int, total: int | None = None, message: str = "") -> None:
    """The progress callback of work run outside a job (commands, tests): reports nothing."""


class JobParametersError(ValueError):
    """Stored parameters that do not make the kind's dataclass: a key it lacks, or one missing."""


@dataclass(frozen=True, kw_only=True)
class JobParameters:
    """A job kind's parameters, typed and frozen: what its task body receives.

    Each kind subclasses this with one field per parameter and nests the ``Serializer``
    that validates them (field names and defaults live there, once). A job's parameters are
    validated when the job is created (``check_job_parameters``) and stored as JSON; the task
    gets them back with ``job_parameters(job)``, as this dataclass, never as a dict. Lists
    become tuples, so the value is immutable all the way down.
    """

    Serializer: ClassVar[type[serializers.Serializer]] = StrictSerializer

    @classmethod
    def from_validated(cls, data: Mapping[str, Any]) -> Self:
        """The dataclass of validated (or stored) parameters; ``JobParametersError`` when a
        key is not a field or a field without a default is missing."""
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise JobParametersError(f"{cls.__name__} has no parameter {', '.join(map(repr, unknown))}.")
        values = {name: tuple(value) if isinstance(value, list) else value for name, value in data.items()}
        try:
            return cls(**values)
        except TypeError as exc:  # a field without a default is missing
            raise JobParametersError(f"{cls.__name__}: {exc}") from None

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> Self:
        """The dataclass of a job row's parameters. A row stored before a parameter existed
        (a job queued across an upgrade) gets that parameter's default, the serializer's;
        nothing is validated again."""
        missing = {
            name: spec.get_default()
            for name, spec in cls.Serializer().fields.items()
            if name not in stored and spec.default is not empty
        }
        return cls.from_validated({**missing, **stored})


@dataclass(frozen=True, kw_only=True)
class NoParameters(JobParameters):
    """A job kind that takes no parameters (any key given is refused)."""


@dataclass(frozen=True)
class JobKind:
    task: str  # the Celery task's registered name
    queue: str  # the only declaration of the kind's queue: "gpu" for model work, else "default"
    parameters: type[JobParameters] = NoParameters  # the parameters' dataclass and serializer
    needs_study: bool = False  # the job works on one study (Job.study must be set)
    # parameters that name files on the workers: field -> "model" or "corpus" (which roots)
    worker_paths: dict[str, str] = field(default_factory=dict)
    # only reads its study (answers, items) and writes its own output (an export, reports, a
    # trained rater): the roles that read it may start it. Any other kind on a study changes
    # it (items, model answers) and is the owners' (``access.can_change_study``) ...
    analysis: bool = False
    # ... but the crowd platforms' calls (publish, review, bonuses), which run the crowd side:
    # owners' and operators' (``access.ROLE_ABILITIES``, ``crowd``).
    crowd: bool = False

    @property
    def ability(self) -> str:
        """What a user's role on the study must include to start the kind on it."""
        return "read" if self.analysis else "crowd" if self.crowd else "change"


JOB_KINDS: dict[str, JobKind] = {}


def register_job_kind(
    name: str,
    *,
    task: str,
    queue: str = DEFAULT_QUEUE,
    parameters: type[JobParameters] = NoParameters,
    needs_study: bool = False,
    worker_paths: dict[str, str] | None = None,
    analysis: bool = False,
    crowd: bool = False,
) -> None:
    """Declare a job kind: its Celery task, its queue, the dataclass of its parameters (with
    their serializer), and which parameters are paths on the workers
    (``{"corpus": "corpus", "model": "model"}``)."""
    if queue not in QUEUES:
        raise ValueError(f"queue must be one of {', '.join(QUEUES)}, not {queue!r}")
    unknown_roots = set((worker_paths or {}).values()) - set(PATH_ROOTS)
    if unknown_roots:
        raise ValueError(f"worker_paths roots must be among {', '.join(PATH_ROOTS)}, not {unknown_roots}")
    JOB_KINDS[name] = JobKind(
        task=task,
        queue=queue,
        parameters=parameters,
        needs_study=needs_study,
        worker_paths=dict(worker_paths or {}),
        analysis=analysis,
        crowd=crowd,
    )


def job_kind_of_task(task: str) -> JobKind:
    """The job kind whose Celery task is named ``task``: where a job task finds its queue."""
    for kind in JOB_KINDS.values():
        if kind.task == task:
            return kind
    raise LookupError(f"No job kind runs task {task!r}: register_job_kind(...) before defining it.")


def check_job_parameters(kind: str, parameters: dict | None) -> dict:
    """Validated parameters for a job kind; ``InputError`` naming the field otherwise."""
    if kind not in JOB_KINDS:
        known = ", ".join(sorted(JOB_KINDS)) or "none"
        raise InputError({"kind": [f"Unknown job kind {kind!r}; known: {known}."]})
    spec = JOB_KINDS[kind].parameters
    values = checked(spec.Serializer, parameters or {}, place="parameters")
    spec.from_validated(values)  # the dataclass the task will get: a kind whose two halves differ fails here
    return values


def job_parameters(job: Job) -> JobParameters:
    """The job's stored parameters as its kind's frozen dataclass (what its task receives)."""
    return JOB_KINDS[job.kind].parameters.from_stored(job.parameters or {})


# Which setting lists the folders a worker path parameter may point into.
# "model": a model folder or a model's name; "model_dir": a folder only (hyperparameters),
# never a name, which the worker would look up relative to its working directory; "output": a
# folder the job writes into (a researcher's own folder only, never the shared one).
PATH_ROOTS = {
    "model": "ROFT_MODEL_ROOTS",
    "model_dir": "ROFT_MODEL_ROOTS",
    "output": "ROFT_MODEL_ROOTS",
    "corpus": "ROFT_CORPUS_ROOTS",
}
# A model given by name (a MODEL_REGISTRY entry, a registered backend, a cached hub id
# such as ``org/name``), not by path: looked up by the worker, never opened as given.
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?")
# Under each root, every researcher has a folder named by their username; this one holds what
# the operator shares with every researcher (read only for their jobs).
SHARED_FOLDER = "shared"


def check_worker_paths(kind: str, parameters: dict | None, user=None) -> None:
    """Refuse job parameters that point outside the configured worker folders, or, for a
    researcher, outside their own folder and the shared one.

    Researchers name files on the GPU workers (a corpus, a model directory); a path
    anywhere else would let them probe, or read, the workers' files. The path's text must be
    absolute, without ``..``, under one of the roots, and so must the path it resolves to on
    this machine (``resolved``: a symbolic link inside one's own folder may point anywhere).
    The web process may not see the workers' disks, so the worker checks again, with its own
    disk, right before the job runs (``check_job_paths_now``). ``InputError`` naming
    ``parameters.<field>`` otherwise.

    Ownership (``user`` given and not an admin, ``worker_folders``): under every root, a
    researcher's jobs read only ``<root>/<username>/…`` and ``<root>/shared/…`` and write only
    into their own folder, by the path's text and by the path it resolves to. Only links are
    followed, so the answer is the same whether another researcher's file exists or not.
    ``user`` None (an operator's command, the admin's form) skips this part; so does an admin.
    """
    spec = JOB_KINDS.get(kind)
    if spec is None:
        return
    folders = worker_folders(user)
    errors: dict[str, list[str]] = {}
    for name, root_kind in spec.worker_paths.items():
        given = (parameters or {}).get(name)
        values = given if isinstance(given, list) else [given]  # a list: every entry is a path or a name
        roots = [posixpath.normpath(root) for root in getattr(settings, PATH_ROOTS[root_kind])]
        if not all(_allowed_path(value, root_kind, roots) for value in values):
            where = ", ".join(roots) or "none are configured"
            noun = "model" if root_kind in ("model_dir", "output") else root_kind
            errors[f"parameters.{name}"] = [
                f"Must be an absolute path inside the {noun} folders ({PATH_ROOTS[root_kind]}: {where})."
            ]
        elif folders is not None and not all(_owned(value, root_kind, roots, folders) for value in values):
            errors[f"parameters.{name}"] = [_not_yours(root_kind, roots, folders)]
    if errors:
        raise InputError(errors)


def worker_folders(user) -> dict[str, set[str]] | None:
    """The top folders under each root that a job started for ``user`` may read and write
    (``{"read": …, "write": …}``); None: any (an admin, or no user at all: the operator).

    The one statement of who owns what under the worker roots: ``check_worker_paths`` applies it
    to the paths a job names, the worker (``workers.tasks.base``) to the relative model names it
    looks up. A username that cannot be a folder of its own (``shared``, ``.``) has none."""
    if user is None or not getattr(user, "is_authenticated", False) or user.is_superuser:
        return None
    username = user.get_username()
    own = set() if username in (SHARED_FOLDER, ".", "..") or "/" in username else {username}
    return {"read": own | {SHARED_FOLDER}, "write": own}


def _owned(value: object, root_kind: str, roots: list[str], folders: dict[str, set[str]]) -> bool:
    if not isinstance(value, str) or not posixpath.isabs(value):
        # None, or a model's name: the worker looks a name up only in the folders the job's
        # owner may read (``workers.lm.registry.model_folders``), so it needs no check here.
        return True
    allowed = folders["write" if root_kind == "output" else "read"]
    return all(_in_folders(path, under, allowed) for path, under in _as_given_and_resolved(value, roots))


def _in_folders(path: str, roots: list[str], allowed: set[str]) -> bool:
    tops = [path[len(root) + 1 :].split("/")[0] for root in roots if path.startswith(root + "/")]
    return bool(tops) and all(top in allowed for top in tops)  # nested roots: yours under each


def _as_given_and_resolved(value: str, roots: list[str]) -> list[tuple[str, list[str]]]:
    """The path as written with the roots as configured, and the path this machine's disk
    resolves it to with the roots resolved likewise: both must pass."""
    return [(posixpath.normpath(value), roots), (resolved(value), [resolved(root) for root in roots])]


def resolved(path: str) -> str:
    """Where ``path`` leads on this machine: every symbolic link followed in the part that
    exists (the nearest existing folder of an output not made yet), the rest as written."""
    return os.path.realpath(posixpath.normpath(path))


def _not_yours(root_kind: str, roots: list[str], folders: dict[str, set[str]]) -> str:
    own = sorted(folders["write"])
    mine = ", ".join(f"{root}/{name}/" for root in roots for name in own) or "none: ask an admin"
    if root_kind == "output":
        return f"Must be a folder inside your own folder ({mine}): a job writes only there."
    shared = ", ".join(f"{root}/{SHARED_FOLDER}/" for root in roots)
    return f"Must be inside your own folder ({mine}) or the shared folder ({shared})."


def _allowed_path(value: object, root_kind: str, roots: list[str]) -> bool:
    if value is None or (root_kind == "model" and _is_model_name(value)):
        return True
    return _path_under(value, roots)


def _is_model_name(value: object) -> bool:
    return isinstance(value, str) and MODEL_NAME.fullmatch(value) is not None and ".." not in value


def _path_under(value: object, roots: list[str]) -> bool:
    if not isinstance(value, str) or "\x00" in value or not posixpath.isabs(value):
        return False
    if ".." in value.split("/"):
        return False
    return all(
        any(root != "/" and (path == root or path.startswith(root + "/")) for root in under)
        for path, under in _as_given_and_resolved(value, roots)
    )


def check_job_paths_now(job: Job) -> None:
    """Check a researcher's job's worker paths again where and when it runs: the web process
    checked them against its own disk when the job was created, but the worker's disk is the
    one read and written, and a link may have been made since (``InputError``, the job fails
    with the message). An operator's job (no owner) was never limited and is not now."""
    if job.created_by_id is not None:
        check_worker_paths(job.kind, job.parameters, job.created_by)


def start_job(*, kind: str, parameters: dict | None = None, study: Study | None = None, user=None) -> Job:
    """Validate the parameters, create the job row, queue its task once the transaction commits."""
    job = create_job(kind=kind, parameters=parameters, study=study, user=user)
    queue_job(job)
    return job


def check_new_job(*, kind: str, parameters: dict | None, study: Study | None, user=None) -> dict:
    """The validated parameters of a job about to be created (``InputError`` naming the field).

    A job started for a user (the API, a command's ``--owner``) names worker files only where
    ``check_worker_paths`` lets that user; without one (the operator's commands, the admin's
    form) any path goes."""
    parameters = check_job_parameters(kind, parameters)
    if JOB_KINDS[kind].needs_study and study is None:
        raise InputError({"study": [f"A {kind} job works on a study: choose one."]})
    if user is not None and getattr(user, "is_authenticated", False):
        check_worker_paths(kind, parameters, user)
    return parameters


def create_job(*, kind: str, parameters: dict | None = None, study: Study | None = None, user=None) -> Job:
    """A validated QUEUED job row that nothing runs yet (commands run it in their own process)."""
    parameters = check_new_job(kind=kind, parameters=parameters, study=study, user=user)
    owner = user if user is not None and getattr(user, "is_authenticated", False) else None
    return Job.objects.create(kind=kind, parameters=parameters, study=study, created_by=owner)


def queue_job(job: Job) -> None:
    """Send the job's task to its queue once the current transaction commits."""
    transaction.on_commit(lambda: _send(job))


def _send(job: Job) -> None:
    from roft_site.celery import app

    spec = JOB_KINDS[job.kind]
    if settings.CELERY_TASK_ALWAYS_EAGER and settings.JOBS_IN_BACKGROUND_THREAD:
        _run_in_thread(app.tasks[spec.task], job.pk)
    elif settings.CELERY_TASK_ALWAYS_EAGER:
        run_task_here(app.tasks[spec.task], job.pk)
    else:
        app.send_task(spec.task, args=[job.pk], queue=spec.queue)


# Set while a job's task runs in this process (``run_task_here``); a context variable, so
# a job run in a thread beside the request is quiet without quieting anyone else's lines.
_RUNNING_HERE: ContextVar[bool] = ContextVar("job_task_running_here", default=False)


class _CeleryLinesOfTasksRunHere(logging.Filter):
    """Drops Celery's own INFO lines ("Task workers.tasks… succeeded in 0.05s: None") about a
    task run in this process: its job row says how it ended, and the command that ran it
    prints that (a "succeeded" beside the command's "job 4 failed" read as a contradiction,
    since a job task that records a failure returns normally). Warnings and errors pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or not _RUNNING_HERE.get()


logging.getLogger("celery.app.trace").addFilter(_CeleryLinesOfTasksRunHere())


def run_task_here(task, job_id: int) -> None:
    """Run a job's task in this process, as a worker would (its claim, finish and fail steps),
    without Celery's per-task log lines: the one way commands, the embedded demo and eager
    settings run a job here."""
    token = _RUNNING_HERE.set(True)
    try:
        task.apply(args=[job_id], throw=False)
    finally:
        _RUNNING_HERE.reset(token)


def _run_in_thread(task, job_id: int) -> None:
    """Run an in-process task beside the request (the embedded runtime has no worker):
    the page that started it answers at once and polls the job like any other."""

    def run() -> None:
        try:
            run_task_here(task, job_id)
        finally:
            connections.close_all()  # this thread's own connections

    threading.Thread(target=run, name=f"job-{job_id}", daemon=True).start()


def claim_job(job_id: int) -> Job | None:
    """QUEUED → RUNNING, or take over a RUNNING job whose worker went silent.

    Returns None when the job is done, cancelled, or alive in another worker: a message
    delivered twice then does nothing the second time. The returned job's ``attempts``
    is this run's number: the later steps of the run go through only while it still is.
    """
    now = timezone.now()
    claimable = Q(status=Job.Status.QUEUED) | _stalled(now)
    updated = Job.objects.filter(claimable, pk=job_id).update(
        status=Job.Status.RUNNING, started_at=now, heartbeat_at=now, attempts=F("attempts") + 1
    )
    return Job.objects.get(pk=job_id) if updated else None


def _stalled(now) -> Q:
    """RUNNING with no heartbeat for ``JOB_HEARTBEAT_GRACE_S``: its worker died or lost the database."""
    silent_since = now - timedelta(seconds=settings.JOB_HEARTBEAT_GRACE_S)
    return Q(status=Job.Status.RUNNING) & (Q(heartbeat_at__lt=silent_since) | Q(heartbeat_at__isnull=True))


def _this_run(job_id: int, attempt: int | None):
    """The job while it is RUNNING in the run numbered ``attempt`` (any run when None).

    A run that was taken over after it went silent (a worker that froze, then woke up) finds
    nothing here, so it can neither report, finish nor fail the job the new run now owns.
    """
    jobs = Job.objects.filter(pk=job_id, status=Job.Status.RUNNING)
    return jobs if attempt is None else jobs.filter(attempts=attempt)


def beat_job(job_id: int, attempt: int | None = None) -> bool:
    """A running job's sign of life (``workers.progress.job_heartbeat`` sends one regularly)."""
    return bool(_this_run(job_id, attempt).update(heartbeat_at=timezone.now()))


def report_progress(
    job_id: int, *, done: int, total: int | None = None, message: str = "", attempt: int | None = None
) -> bool:
    """Record progress; returns False when the job was cancelled or taken over meanwhile (stop)."""
    values = {"progress_done": done, "message": message[:300], "heartbeat_at": timezone.now()}
    if total is not None:
        values["progress_total"] = total
    return bool(_this_run(job_id, attempt).update(**values))


def finish_job(job_id: int, *, result: dict | None = None, attempt: int | None = None) -> bool:
    """RUNNING → DONE with a result summary (the last progress message stays)."""
    return bool(
        _this_run(job_id, attempt).update(
            status=Job.Status.DONE, result=result or {}, finished_at=timezone.now()
        )
    )


def fail_job(job_id: int, *, error: str, traceback: str = "", attempt: int | None = None) -> bool:
    """RUNNING or QUEUED → FAILED. ``error`` is the short message researchers see; the
    ``traceback`` is kept for admins (and goes to the log where it happened)."""
    jobs = Job.objects.filter(pk=job_id, status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
    if attempt is not None:
        jobs = jobs.filter(attempts=attempt)
    return bool(
        jobs.update(
            status=Job.Status.FAILED,
            error=error[:1000],
            traceback=traceback[:20000],
            finished_at=timezone.now(),
        )
    )


def release_job(job_id: int, *, attempt: int) -> bool:
    """RUNNING → QUEUED after trouble that may pass: the task's retry claims it again."""
    return bool(_this_run(job_id, attempt).update(status=Job.Status.QUEUED))


def cancel_job(job_id: int) -> bool:
    """Ask a queued or running job to stop; the task sees it at its next progress report."""
    return bool(
        Job.objects.filter(pk=job_id, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).update(
            status=Job.Status.CANCELLED, finished_at=timezone.now()
        )
    )


STALLED_ERROR = "The worker running this job stopped responding {attempts} times; it was not retried again."


@dataclass(frozen=True)
class Sweep:
    requeued: list[int]
    failed: list[int]


def sweep_stalled_jobs(jobs: QuerySet[Job] | None = None) -> Sweep:
    """Requeue every stalled job (or fail it after ``JOB_MAX_ATTEMPTS`` runs).

    The beat task and ``manage.py sweepjobs`` call this, and *Recompute* does for its own
    study, so a job whose worker died never stays ``running``. Each change is conditional
    on the job still being stalled, so a sweep racing a redelivered task acts once.
    """
    now = timezone.now()
    requeued: list[int] = []
    failed: list[int] = []
    candidates = (jobs if jobs is not None else Job.objects.all()).filter(_stalled(now))
    for job_id, attempts in candidates.values_list("pk", "attempts"):
        still_stalled = Job.objects.filter(_stalled(now), pk=job_id, attempts=attempts)
        if attempts >= settings.JOB_MAX_ATTEMPTS:
            if still_stalled.update(
                status=Job.Status.FAILED,
                error=STALLED_ERROR.format(attempts=attempts),
                finished_at=timezone.now(),
            ):
                failed.append(job_id)
        elif still_stalled.update(status=Job.Status.QUEUED):
            queue_job(Job.objects.get(pk=job_id))
            requeued.append(job_id)
    return Sweep(requeued=requeued, failed=failed)


RECENT_JOBS = 50


def job_board(user) -> tuple[list[Job], list[Job]]:
    """(queued or running jobs, the most recent finished ones) for the jobs page."""
    jobs = researcher_jobs(user).select_related("study")
    active = list(jobs.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).order_by("created_at"))
    recent = list(jobs.filter(status__in=Job.FINISHED).order_by("-finished_at", "-pk")[:RECENT_JOBS])
    return active, recent


def job_status(job: Job) -> dict:
    """The one shape of a job's state: the jobs page, the dashboard and the API all show this
    (the API adds what was asked and what came out). Needs ``job.study`` (select it)."""
    return {
        "id": job.pk,
        "kind": job.kind,
        "study": job.study.slug if job.study is not None else None,
        "status": job.status,
        "status_label": job.get_status_display(),
        "finished": job.status in Job.FINISHED,
        "progress_done": job.progress_done,
        "progress_total": job.progress_total,
        "percent": job.percent,
        "message": job.message,
        "error": job.error,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
    }


def job_details(job: Job) -> dict:
    """``job_status`` plus what was asked and what came out: the API's job and the exports
    table. Needs ``job.study`` and ``job.created_by`` (select them)."""
    return job_status(job) | {
        "parameters": job.parameters,
        "result": job.result,
        "created_by": job.created_by.username if job.created_by is not None else None,
        "created_at": job.created_at,
    }
