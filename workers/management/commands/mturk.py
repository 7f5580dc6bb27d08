"""python manage.py mturk publish|review|bonus SLUG … (docs/crowd.md)."""

from __future__ import annotations

from annotation.models import Study
from annotation.platforms.money import MAX_REWARD_CENTS
from workers.management.platformcommand import PlatformCommand, cents_from, study_url


class Command(PlatformCommand):
    help = (
        "Mechanical Turk through boto3 (credentials from the AWS environment variables), as a job recorded "
        "in the audit log: publish a HIT, review its assignments, send bonuses once each. --dry-run prints "
        "what would be sent."
    )
    platform = "mturk"

    publish_help = "create a HIT with the study's ExternalQuestion"

    def add_publish(self, publish) -> None:
        publish.add_argument(
            "--assignments", type=int, help="assignments wanted (default: from the answers still wanted)"
        )
        publish.add_argument("--reward", required=True, help="reward per assignment, in US dollars (0.50)")
        publish.add_argument("--minutes", type=int, required=True, help="estimated minutes per assignment")
        publish.add_argument("--sandbox", action="store_true", help="the requester sandbox")

    def publish_parameters(self, study: Study, options: dict) -> dict:
        return {
            "study_url": study_url(study),
            "places": options["assignments"],
            "reward_cents": cents_from(options["reward"], option="--reward", high=MAX_REWARD_CENTS),
            "minutes": options["minutes"],
            "sandbox": options["sandbox"],
        }
