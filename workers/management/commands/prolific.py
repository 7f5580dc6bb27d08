"""python manage.py prolific publish|review|bonus|webhook SLUG … (docs/crowd.md)."""

from __future__ import annotations

import sys

from django.core.management.base import CommandError

from annotation.errors import InputError
from annotation.models import Study
from annotation.platforms.links import site_hook_url
from annotation.platforms.money import MAX_REWARD_CENTS
from annotation.platforms.prolific.hooks import SUBMISSION_EVENT, store_hook_secret
from workers.management.jobcommand import input_error
from workers.management.platformcommand import PlatformCommand, cents_from, study_url


class Command(PlatformCommand):
    help = (
        "Prolific through its API, as a job recorded in the audit log: publish the study, review its "
        "submissions (approve, reject, leave), pay bonuses once each. --dry-run prints what would be sent."
    )
    platform = "prolific"

    publish_help = "create the Prolific study and publish it"

    def add_publish(self, publish) -> None:
        publish.add_argument(
            "--places", type=int, help="participants wanted (default: from the answers still wanted)"
        )
        publish.add_argument(
            "--reward", required=True, help="reward per participant, in pounds with two decimals (1.50)"
        )
        publish.add_argument("--minutes", type=int, required=True, help="estimated minutes per participant")
        publish.add_argument("--draft", action="store_true", help="create it as a draft, do not publish")

    def add_actions(self, sub) -> None:
        webhook = sub.add_parser(
            "webhook",
            help="keep the workspace's webhook secret for the study (its returns then free pages at once)",
        )
        webhook.add_argument("slug", help="the study's slug")
        given = webhook.add_mutually_exclusive_group(required=True)
        given.add_argument(
            "--secret", help="the secret Prolific gave for the workspace ('-': read it from standard input)"
        )
        given.add_argument(
            "--clear", action="store_true", help="forget the secret: the address refuses events"
        )

    def own_action(self, action: str, study: Study, options: dict) -> bool:
        if action != "webhook":
            return False
        secret = "" if options["clear"] else options["secret"]
        if secret == "-":  # noqa: S105 - the option's "read it from standard input"
            secret = sys.stdin.readline()
        if not options["clear"] and not secret.strip():
            raise CommandError("webhook: the secret is empty (use --clear to forget it).")
        try:
            store_hook_secret(study, secret)
        except InputError as exc:
            raise input_error(exc, "nothing was stored") from None
        if options["clear"]:
            self.stdout.write(f"Forgot the webhook secret of {study.slug}: its address refuses events now.")
            return True
        address = site_hook_url(study)
        self.stdout.write(
            f"Kept the webhook secret of {study.slug}. Subscribe this address to {SUBMISSION_EVENT} "
            f"in the same Prolific workspace:\n{address}"
        )
        return True

    def publish_parameters(self, study: Study, options: dict) -> dict:
        return {
            "study_url": study_url(study),
            "places": options["places"],
            "reward_cents": reward_cents(options["reward"]),
            "minutes": options["minutes"],
            "draft": options["draft"],
        }


def reward_cents(text: str) -> int:
    """The reward as cents, read like every other amount (``platforms.money``). A whole number
    is refused: until this release the option took cents, so ``--reward 150`` from an old
    script would otherwise ask for 150.00 instead of 1.50."""
    if "." not in text:
        raise CommandError(
            f"--reward is in pounds with two decimals (1.50); {text!r} has no decimal point. "
            "It took cents before: write 1.50 for 150 cents. Nothing was sent."
        )
    return cents_from(text, option="--reward", high=MAX_REWARD_CENTS)
