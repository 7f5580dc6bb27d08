"""Review finding 22 (adversarial review): a crafted link (`?PROLIFIC_PID=<someone's id>`) opened
before sign-up bound the new game account to that Prolific participant."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Participant
from tests.helpers.crowd_ids import prolific_id

pytestmark = pytest.mark.django_db

SIGNUP = {"username": "rt_victim_1", "password1": "a-long-pass-99", "password2": "a-long-pass-99"}


def test_a_planted_link_then_sign_up_leaves_the_account_its_own(make_claim_study):
    study = make_claim_study()
    victim = Client()
    victim.get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('planted-by-attacker')}", follow=True)
    assert victim.post("/play/signup/", SIGNUP).status_code == 302
    assert not Participant.objects.filter(user__username="rt_victim_1", source="prolific").exists()


def test_a_known_prolific_id_in_the_session_is_never_claimed_by_a_login(make_claim_study):
    study = make_claim_study()
    attacker = Client()
    attacker.post(f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('planted')}", {"decision": "agree"})
    victim = Client()
    victim.get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('planted')}")  # resumes the existing participant
    victim.post("/play/signup/", SIGNUP)
    planted = Participant.objects.get(platform_worker_id=prolific_id("planted"))
    assert planted.user is None
    assert victim.session.get("participant_id") != planted.pk
