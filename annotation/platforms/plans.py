"""What a platform action will do, computed from our records before anything is sent: the
confirmation page shows it (counts and total cost) and the researcher confirms or not."""

from __future__ import annotations

from dataclasses import dataclass, field

from annotation.errors import InputError
from annotation.models import PlatformStudy, Study
from annotation.numbers import whole_number_within
from annotation.platforms.bonuses import BonusLine, PlannedBonus, check_bonus_lines
from annotation.platforms.lists import named_enrollments
from annotation.platforms.money import MAX_MINUTES, MAX_PLACES, MAX_REWARD_CENTS, cents_from_text
from annotation.platforms.review import APPROVE, REJECT, sent_decisions, verdict
from annotation.services.participation.capacity import places_wanted


@dataclass(frozen=True)
class PlanRow:
    participant: str  # the pseudonym (the page never needs the platform id)
    action: str
    reason: str


@dataclass(frozen=True)
class ReviewPlan:
    rows: list[PlanRow] = field(default_factory=list)
    reward_cents: int | None = None

    def count(self, action: str) -> int:
        return sum(1 for row in self.rows if row.action == action)

    @property
    def approvals(self) -> int:
        return self.count(APPROVE)

    @property
    def rejections(self) -> int:
        return self.count(REJECT)

    @property
    def left(self) -> int:
        return len(self.rows) - self.approvals - self.rejections

    @property
    def cost_cents(self) -> int | None:
        """The rewards the approvals release (Prolific and MTurk pay on approval)."""
        return None if self.reward_cents is None else self.approvals * self.reward_cents


def review_plan(study: Study, *, platform: str) -> ReviewPlan:
    """Our verdict on each of the study's participants from ``platform`` whose submission
    has no decision sent yet: what ``… review`` will do for the ones the platform lists as
    awaiting review."""
    sent = sent_decisions(study, platform).values("participant_id")
    rows = []
    for enrollment, pseudonym in named_enrollments(study, platform, without=sent):
        decided = verdict(study, enrollment)
        rows.append(PlanRow(pseudonym, decided.action, decided.reason))
    reward = PlatformStudy.objects.filter(study=study).values_list("reward_cents", flat=True).first()
    return ReviewPlan(rows, reward)


@dataclass(frozen=True)
class BonusPlan:
    bonuses: list[PlannedBonus]

    @property
    def total_cents(self) -> int:
        return sum(bonus.line.amount_cents for bonus in self.bonuses)


def bonus_plan(study: Study, *, platform: str, lines: list[BonusLine]) -> BonusPlan:
    """The file's bonuses, checked (participants, cap): ``InputError`` as the job would raise."""
    return BonusPlan(check_bonus_lines(study, platform=platform, lines=lines))


def publish_parameters(
    *, study_url: str, reward: str, places: str, minutes: str, draft: bool, sandbox: bool
) -> dict:
    """A publish job's parameters from the page's text fields, each read by ``money`` with
    the bounds the job's parameters hold (``PlatformPublishParameters``); every field at
    fault named at once. Empty ``places``: from the answers still wanted."""
    parameters: dict = {"study_url": study_url, "draft": draft, "sandbox": sandbox}
    errors: dict[str, list[str]] = {}
    readers = {
        "reward_cents": lambda: cents_from_text(reward, field="reward", high=MAX_REWARD_CENTS),
        "places": lambda: (
            whole_number_within(places, field="places", low=1, high=MAX_PLACES) if places.strip() else None
        ),
        "minutes": lambda: whole_number_within(minutes, field="minutes", low=1, high=MAX_MINUTES),
    }
    for name, read in readers.items():
        try:
            parameters[name] = read()
        except InputError as exc:
            errors |= exc.errors
    if errors:
        raise InputError(errors)
    return parameters


def publish_places(study: Study, places: int | None) -> int:
    """The places (MTurk: assignments) a publish asks for: as given, else the participants
    still needed (``capacity.places_wanted``). The confirmation's count and both publishes."""
    return places or places_wanted(study)
