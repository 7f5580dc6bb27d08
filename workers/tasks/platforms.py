"""The crowd platforms' jobs (queue ``default``): publish, review and bonus on Prolific and MTurk.

Each body builds the call context (who, which study, which job, dry run or not) and hands it
to the service; a platform error fails the job with its reason (``JobTask``), and what was
recorded before it (decisions sent, bonuses paid) stays recorded.
"""

from __future__ import annotations

from annotation.job_parameters import (
    PlatformBonusParameters,
    PlatformPublishParameters,
    PlatformReviewParameters,
)
from annotation.models import Job
from annotation.platforms.audit import CallContext
from annotation.platforms.bonuses import BonusLine
from annotation.platforms.mturk import calls as mturk
from annotation.platforms.mturk.client import MTurkCalls, mturk_calls
from annotation.platforms.prolific import calls as prolific
from annotation.platforms.prolific.client import prolific_client
from annotation.platforms.records import platform_study
from annotation.services.jobs import Progress

from .base import job_study, job_task


def _context(job: Job, dry_run: bool) -> CallContext:
    return CallContext(study=job_study(job), user=job.created_by, job=job, dry_run=dry_run)


def _with_plan(result: dict, would_send) -> dict:
    """The result, with the lines a dry run would have sent."""
    return {**result, "would_send": [call.line() for call in would_send]} if would_send else result


def _lines(parameters: PlatformBonusParameters) -> list[BonusLine]:
    return [BonusLine.from_dict(row) for row in parameters.bonuses]


@job_task("workers.tasks.platforms.prolific_publish_task")
def prolific_publish_task(job: Job, parameters: PlatformPublishParameters, progress: Progress) -> dict:
    client = prolific_client(_context(job, parameters.dry_run))
    result = prolific.publish_study(
        client.context.study,
        client,
        study_url=parameters.study_url,
        places=parameters.places,
        reward_cents=parameters.reward_cents,
        minutes=parameters.minutes,
        draft=parameters.draft,
    )
    return _with_plan(result, client.would_send)


@job_task("workers.tasks.platforms.prolific_review_task")
def prolific_review_task(job: Job, parameters: PlatformReviewParameters, progress: Progress) -> dict:
    client = prolific_client(_context(job, parameters.dry_run))
    return _with_plan(prolific.review_submissions(client.context.study, client), client.would_send)


@job_task("workers.tasks.platforms.prolific_bonus_task")
def prolific_bonus_task(job: Job, parameters: PlatformBonusParameters, progress: Progress) -> dict:
    client = prolific_client(_context(job, parameters.dry_run))
    return _with_plan(
        prolific.pay_bonuses(client.context.study, client, lines=_lines(parameters)), client.would_send
    )


def _mturk_calls(job: Job, dry_run: bool, *, sandbox: bool | None = None) -> MTurkCalls:
    """The calls of a job on the HIT's endpoint (a publish: the one it asks for)."""
    context = _context(job, dry_run)
    if sandbox is None:
        sandbox = platform_study(context.study).mturk_sandbox
    return mturk_calls(context, sandbox=sandbox)


@job_task("workers.tasks.platforms.mturk_publish_task")
def mturk_publish_task(job: Job, parameters: PlatformPublishParameters, progress: Progress) -> dict:
    calls = _mturk_calls(job, parameters.dry_run, sandbox=parameters.sandbox)
    result = mturk.publish_hit(
        calls.context.study,
        calls,
        study_url=parameters.study_url,
        assignments=parameters.places,
        reward_cents=parameters.reward_cents,
        minutes=parameters.minutes,
        sandbox=parameters.sandbox,
    )
    return _with_plan(result, calls.would_send)


@job_task("workers.tasks.platforms.mturk_review_task")
def mturk_review_task(job: Job, parameters: PlatformReviewParameters, progress: Progress) -> dict:
    calls = _mturk_calls(job, parameters.dry_run)
    return _with_plan(mturk.review_assignments(calls.context.study, calls), calls.would_send)


@job_task("workers.tasks.platforms.mturk_bonus_task")
def mturk_bonus_task(job: Job, parameters: PlatformBonusParameters, progress: Progress) -> dict:
    calls = _mturk_calls(job, parameters.dry_run)
    return _with_plan(
        mturk.send_bonuses(calls.context.study, calls, lines=_lines(parameters)), calls.would_send
    )
