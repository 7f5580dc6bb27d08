"""python manage.py prolific publish|review|bonus SLUG … (docs/crowd.md)."""

from __future__ import annotations

from annotation.models import Study
from workers.management.platformcommand import PlatformCommand, study_url


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
        publish.add_argument("--reward", type=int, required=True, help="reward per participant, in cents")
        publish.add_argument("--minutes", type=int, required=True, help="estimated minutes per participant")
        publish.add_argument("--draft", action="store_true", help="create it as a draft, do not publish")

    def publish_parameters(self, study: Study, options: dict) -> dict:
        return {
            "study_url": study_url(study),
            "places": options["places"],
            "reward_cents": options["reward"],
            "minutes": options["minutes"],
            "draft": options["draft"],
        }
