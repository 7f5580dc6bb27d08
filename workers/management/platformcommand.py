"""What ``manage.py prolific`` and ``manage.py mturk`` share: one subcommand per action, each a
job of the platform's kind run here (or queued), its outcome printed for a person."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.models import Job, Platform, Study
from annotation.platforms.bonuses import parse_bonus_csv, pseudonymous_lines, settle, stuck_keys
from annotation.platforms.links import site_study_url
from annotation.platforms.money import as_currency, cents_from_text
from annotation.platforms.prolific.calls import unpaid_batches
from annotation.services.jobs import create_job
from workers.management.jobcommand import input_error, owner_named, run_or_queue


def study_url(study: Study) -> str:
    """The study's absolute link on this site (``SITE_URL``), as the page sends it."""
    return site_study_url(study)


def cents_from(text: str, *, option: str, high: int) -> int:
    """A money amount given in the currency's unit (``0.50``) as cents, read as the page and
    the bonus file read theirs (``platforms.money.cents_from_text``); the option named otherwise."""
    try:
        return cents_from_text(text, field=option, high=high)
    except InputError as exc:
        raise CommandError(f"{exc.summary()} Nothing was sent.") from None


class PlatformCommand(BaseCommand, ABC):
    platform = ""  # "prolific" or "mturk"

    def add_common(self, parser) -> None:
        parser.add_argument("slug", help="the study's slug")
        parser.add_argument("--dry-run", action="store_true", help="print what would be sent; send no change")
        parser.add_argument(
            "--owner",
            help=(
                "the researcher the calls are made for (their stored token, the audit log); "
                "default: the study's owner"
            ),
        )
        parser.add_argument(
            "--queue", action="store_true", help="queue the job for a worker instead of running it here"
        )

    def add_arguments(self, parser):
        """The three actions of every platform: ``publish`` (with the platform's own options,
        ``add_publish``), ``review`` and ``bonus``."""
        sub = parser.add_subparsers(dest="action", required=True)
        publish = sub.add_parser("publish", help=self.publish_help)
        self.add_common(publish)
        self.add_publish(publish)
        review = sub.add_parser("review", help="approve, reject or leave the submissions awaiting review")
        self.add_common(review)
        self.add_bonus(sub)
        self.add_actions(sub)

    def add_actions(self, sub) -> None:
        """A platform's own actions beside the three (run by ``own_action``, not as jobs)."""

    def own_action(self, action: str, study: Study, options: dict) -> bool:
        """Run one of the platform's own actions (``add_actions``); False: not one of them."""
        return False

    publish_help = ""

    @abstractmethod
    def add_publish(self, publish) -> None:
        """The publish options of the platform (reward, minutes, places and its own)."""

    def add_bonus(self, sub) -> None:
        bonus = sub.add_parser(
            "bonus", help="pay bonuses from a CSV: participant (pseudonym or id), amount[, reason]"
        )
        self.add_common(bonus)
        bonus.add_argument("file", nargs="?", type=Path, help="the CSV file")
        bonus.add_argument(
            "--settle",
            nargs=2,
            metavar=("PAYMENT_ID", "paid|unpaid"),
            help=(
                "after checking the platform's records: a payment of unknown outcome (as --list names it: "
                "Prolific's bulk bonus id, MTurk's UniqueRequestToken) was paid, or not"
            ),
        )
        bonus.add_argument(
            "--list",
            action="store_true",
            help="list payments of unknown outcome and bulk bonuses created and never paid; send nothing",
        )

    def handle(self, *args, action: str, **options):
        study = Study.objects.filter(slug=options["slug"]).first()
        if study is None:
            raise CommandError(f"There is no study {options['slug']!r}.")
        if self.own_action(action, study, options):
            return
        if action == "bonus" and options.get("settle"):
            self.settle(study, *options["settle"])
            return
        if action == "bonus" and options.get("list"):
            self.list_unfinished(study)
            return
        parameters = self.parameters(action, study, options)
        if options["dry_run"]:
            parameters["dry_run"] = True
        try:
            job = create_job(
                kind=f"{self.platform}_{action}",
                parameters=parameters,
                study=study,
                # The owner's stored token by default, as the page uses its user's (U6).
                user=owner_named(options["owner"]) or study.owner,
            )
        except InputError as exc:
            raise input_error(exc, "nothing was sent") from None
        if options["queue"]:
            run_or_queue(self, job, queue=True, description="")
            return
        from workers.progress import run_job_here

        job = run_job_here(job, description=f"{self.platform} {action} {study.slug}", stream=self.stderr)
        if job.status != Job.Status.DONE:
            raise CommandError(f"{job.kind} job {job.pk} {job.status}: {job.error}")
        self.report(job)

    def parameters(self, action: str, study: Study, options: dict) -> dict:
        if action == "review":
            return {}
        if action == "bonus":
            if options["file"] is None:
                raise CommandError("bonus: give the CSV file (or --settle).")
            try:
                lines = parse_bonus_csv(options["file"].read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(f"{options['file']}: {exc}") from None
            except InputError as exc:
                raise input_error(exc, "nothing was sent") from None
            lines = pseudonymous_lines(study, platform=self.platform, lines=lines)
            return {"bonuses": [line.as_dict() for line in lines]}
        return self.publish_parameters(study, options)

    @abstractmethod
    def publish_parameters(self, study: Study, options: dict) -> dict:
        """The publish job's parameters from the command's options (each platform's own)."""

    def settle(self, study: Study, payment_id: str, outcome: str) -> None:
        if outcome not in ("paid", "unpaid"):
            raise CommandError("--settle: the outcome is 'paid' or 'unpaid'.")
        changed = settle(study, platform=self.platform, key=payment_id, paid=outcome == "paid")
        if not changed:
            raise CommandError(f"--settle: no bonus of {study.slug} is waiting on payment {payment_id!r}.")
        self.stdout.write(f"Settled {changed} bonus(es) of payment {payment_id} as {outcome}.")

    def list_unfinished(self, study: Study) -> None:
        """What a bonus run left unfinished: payments to settle, bulk bonuses never paid."""
        stuck = stuck_keys(study, platform=self.platform)
        for payment in stuck:
            self.stdout.write(f"Outcome unknown (settle it): payment {payment or '(no id)'}")
        batches = unpaid_batches(study) if self.platform == Platform.PROLIFIC else []
        for batch in batches:
            amount = batch["amount_cents"]
            waiting = (
                f"{batch['waiting']} bonus(es) of ours wait in it: the next run pays it"
                if batch["waiting"]
                else "none of ours waits in it: nothing here will pay it"
            )
            self.stdout.write(
                f"Created, not paid: bulk bonus {batch['batch_id']}"
                f" ({as_currency(amount) if isinstance(amount, int) else 'amount unknown'}); {waiting}"
            )
        if not stuck and not batches:
            self.stdout.write("Nothing unfinished: every bonus recorded is paid or waiting for the next run.")

    def report(self, job: Job) -> None:
        result = dict(job.result)
        planned = result.pop("would_send", [])
        if job.parameters.get("dry_run"):
            self.stdout.write(f"Dry run ({job.kind} job {job.pk}): would send {len(planned)} call(s):")
            for line in planned:
                self.stdout.write(f"  {line}")
        self.stdout.write(f"{job.kind} job {job.pk} done: {json.dumps(result, sort_keys=True)}")
