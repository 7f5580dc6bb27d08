"""python manage.py prolific publish|review|bonus SLUG … (docs/crowd.md)."""

from __future__ import annotations

from django.core.management.base import CommandError

from annotation.models import Study
from annotation.platforms.money import MAX_REWARD_CENTS
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
