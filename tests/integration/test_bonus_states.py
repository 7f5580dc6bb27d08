"""The one bonus state machine (``annotation.platforms.bonuses``) both platforms pay through:
every transition it allows, and the ones it refuses, with the platform's call stood in by a
function that succeeds or fails as each case needs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Participant, Platform, PlatformBonus
from annotation.platforms import bonuses
from annotation.platforms.errors import (
    PlatformError,
    PlatformOutcomeUnknown,
    PlatformRefused,
    PlatformUnreachable,
)
from tests.helpers.platforms import crowd_participant

pytestmark = pytest.mark.django_db

NEW, CREATING, CREATED, PAYING, PAID = (
    PlatformBonus.State.NEW,
    PlatformBonus.State.CREATING,
    PlatformBonus.State.CREATED,
    PlatformBonus.State.PAYING,
    PlatformBonus.State.PAID,
)


@pytest.fixture
def bonus(crowd_study):
    """One MTurk bonus in a given state under the key ``K1``."""

    def make(state: str, key: str = "K1", reason: str = "accuracy", **fields) -> PlatformBonus:
        participant = crowd_participant(crowd_study, f"W-{reason}", source=Participant.Source.MTURK)
        return PlatformBonus.objects.create(
            study=crowd_study,
            platform=Platform.MTURK,
            participant=participant,
            reason=reason,
            amount_cents=100,
            state=state,
            batch_id=key,
            **fields,
        )

    return make


class FakeCall:
    """A stand-in for one platform call: counts its sends, fails with ``error`` if given."""

    def __init__(self, error: PlatformError | None = None) -> None:
        self.error, self.sent = error, 0

    def __call__(self) -> dict:
        self.sent += 1
        if self.error is not None:
            raise self.error
        return {}


def state(row: PlatformBonus) -> str:
    row.refresh_from_db()
    return row.state


@pytest.mark.parametrize("before", [NEW, CREATED])
def test_a_payment_is_claimed_then_paid(crowd_study, bonus, before):
    row, send = bonus(before), FakeCall()
    paid = bonuses.pay_once(crowd_study, platform=Platform.MTURK, key="K1", before=before, send=send)
    assert send.sent == 1 and [r.pk for r in paid] == [row.pk] and state(row) == PAID
    assert PlatformBonus.objects.get().paid_at is not None


def test_the_claim_is_committed_before_the_call(crowd_study, bonus):
    row = bonus(NEW)
    seen = []

    def send():
        seen.append(PlatformBonus.objects.get(pk=row.pk).state)

    bonuses.pay_once(crowd_study, platform=Platform.MTURK, key="K1", before=NEW, send=send)
    assert seen == [PAYING]


@pytest.mark.parametrize(
    "error",
    [PlatformRefused("no funds", status=400), PlatformUnreachable("connection refused")],
    ids=["refused", "unreachable"],
)
@pytest.mark.parametrize("before", [NEW, CREATED])
def test_a_call_that_did_nothing_gives_the_payment_back(crowd_study, bonus, before, error):
    row = bonus(before)
    with pytest.raises(PlatformError, match="Nothing was paid"):
        bonuses.pay_once(crowd_study, platform=Platform.MTURK, key="K1", before=before, send=FakeCall(error))
    assert state(row) == before and PlatformBonus.objects.get().paying_since is None


def test_a_call_of_unknown_outcome_leaves_the_payment_paying_and_names_how_to_settle_it(crowd_study, bonus):
    row = bonus(NEW)
    with pytest.raises(PlatformOutcomeUnknown) as failed:
        bonuses.pay_once(
            crowd_study,
            platform=Platform.MTURK,
            key="K1",
            before=NEW,
            send=FakeCall(PlatformOutcomeUnknown("503")),
        )
    assert state(row) == PAYING
    assert f"mturk bonus {crowd_study.slug} --settle K1 paid" in str(failed.value)


@pytest.mark.parametrize("held", [CREATING, PAYING, PAID])
def test_a_payment_not_in_the_state_before_the_call_is_not_claimed_or_sent(crowd_study, bonus, held):
    row, send = bonus(held), FakeCall()
    assert bonuses.pay_once(crowd_study, platform=Platform.MTURK, key="K1", before=NEW, send=send) == []
    assert send.sent == 0 and state(row) == held


def test_only_the_named_payment_is_claimed(crowd_study, bonus):
    mine, other = bonus(NEW, key="K1", reason="a"), bonus(NEW, key="K2", reason="b")
    bonuses.pay_once(crowd_study, platform=Platform.MTURK, key="K1", before=NEW, send=FakeCall())
    assert state(mine) == PAID and state(other) == NEW


def test_a_resend_under_the_same_key_pays_a_stuck_payment(crowd_study, bonus):
    row, send = bonus(PAYING, paying_since=timezone.now()), FakeCall()
    paid = bonuses.pay_again(crowd_study, platform=Platform.MTURK, key="K1", send=send)
    assert send.sent == 1 and [r.pk for r in paid] == [row.pk] and state(row) == PAID


@pytest.mark.parametrize(
    "error",
    [PlatformRefused("token used", status=400), PlatformOutcomeUnknown("time-out")],
    ids=["refused", "unknown"],
)
def test_a_failed_resend_keeps_the_payment_paying(crowd_study, bonus, error):
    """A refusal of a resend may mean the first call landed (the platform knows the key):
    never given back, so it is never paid under a fresh call."""
    row = bonus(PAYING, paying_since=timezone.now())
    with pytest.raises(PlatformOutcomeUnknown, match="--settle K1"):
        bonuses.pay_again(crowd_study, platform=Platform.MTURK, key="K1", send=FakeCall(error))
    assert state(row) == PAYING


def test_a_stuck_payment_refuses_every_run_naming_its_key(crowd_study, bonus):
    bonus(PAYING, paying_since=timezone.now())
    with pytest.raises(PlatformError, match=r"may or may not have been paid.*: K1\."):
        bonuses.refuse_stuck(crowd_study, platform=Platform.MTURK)
    assert bonuses.stuck_keys(crowd_study, platform=Platform.MTURK) == ["K1"]
    bonuses.refuse_stuck(crowd_study, platform=Platform.PROLIFIC)  # the other platform's runs go on


def test_a_stuck_payment_within_its_keys_life_may_be_resent_and_after_it_refuses(crowd_study, bonus):
    row = bonus(PAYING, paying_since=timezone.now() - timedelta(hours=23))
    bonuses.refuse_stuck(crowd_study, platform=Platform.MTURK, resend_within=timedelta(days=1))
    PlatformBonus.objects.filter(pk=row.pk).update(paying_since=timezone.now() - timedelta(hours=25))
    with pytest.raises(PlatformError, match="K1"):
        bonuses.refuse_stuck(crowd_study, platform=Platform.MTURK, resend_within=timedelta(days=1))


def test_settle_paid_and_unpaid_by_key(crowd_study, bonus):
    paid_one, unpaid_one = bonus(PAYING, key="K1", reason="a"), bonus(PAYING, key="K2", reason="b")
    assert bonuses.settle(crowd_study, platform=Platform.MTURK, key="K1", paid=True) == 1
    assert bonuses.settle(crowd_study, platform=Platform.MTURK, key="K2", paid=False) == 1
    assert state(paid_one) == PAID
    assert state(unpaid_one) == NEW and PlatformBonus.objects.get(pk=unpaid_one.pk).batch_id == ""
    assert bonuses.stuck_keys(crowd_study, platform=Platform.MTURK) == []


@pytest.mark.parametrize("held", [NEW, CREATED, PAID])
def test_settle_changes_only_a_paying_payment(crowd_study, bonus, held):
    row = bonus(held)
    assert bonuses.settle(crowd_study, platform=Platform.MTURK, key="K1", paid=False) == 0
    assert bonuses.settle(crowd_study, platform=Platform.PROLIFIC, key="K1", paid=True) == 0
    assert state(row) == held


def test_a_bulk_bonus_claim_is_given_back_or_named_and_never_taken_twice(crowd_study, bonus):
    row = bonus(NEW, key="")
    claimed = bonuses.claim_new_bonuses(crowd_study, platform=Platform.MTURK)
    assert [r.pk for r in claimed] == [row.pk] and state(row) == CREATING
    assert bonuses.claim_new_bonuses(crowd_study, platform=Platform.MTURK) == []  # a second run takes none
    bonuses.give_back_claimed(claimed)
    assert state(row) == NEW
    claimed = bonuses.claim_new_bonuses(crowd_study, platform=Platform.MTURK)
    bonuses.name_created_bonuses(claimed, "B1")
    assert state(row) == CREATED and PlatformBonus.objects.get().batch_id == "B1"
    bonuses.give_back_claimed(claimed)  # no longer CREATING: nothing to give back
    assert state(row) == CREATED


def test_a_claim_left_by_a_dead_run_is_taken_over(crowd_study, bonus):
    row = bonus(CREATING, key="", paying_since=timezone.now() - timedelta(hours=1))
    assert [r.pk for r in bonuses.claim_new_bonuses(crowd_study, platform=Platform.MTURK)] == [row.pk]
