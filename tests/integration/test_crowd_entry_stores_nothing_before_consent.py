"""Review finding 18 (adversarial review): each cookieless GET (or HEAD) of a study link
created a Participant and an Enrollment. Now the link only shows consent; agreeing creates
them."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Enrollment, Participant
from tests.helpers.crowd_ids import mturk_id, prolific_id

pytestmark = pytest.mark.django_db


def test_looking_at_a_study_link_stores_no_participant(make_claim_study):
    study = make_claim_study()
    for query in (
        "",
        f"?PROLIFIC_PID={prolific_id('crawler')}",
        f"?workerId={mturk_id('W1')}&assignmentId=A1&hitId=H1",
    ):
        for _ in range(3):
            assert Client().get(f"/s/{study.slug}/{query}", follow=True).status_code == 200
            Client().head(f"/s/{study.slug}/{query}")
    assert Participant.objects.count() == 0 and Enrollment.objects.count() == 0


def test_agreeing_to_consent_creates_the_participant_once(make_claim_study):
    study = make_claim_study()
    client = Client()
    consent = client.get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('real')}", follow=True)
    client.post(consent.redirect_chain[-1][0], {"decision": "agree"})
    client.post(consent.redirect_chain[-1][0], {"decision": "agree"})
    assert Participant.objects.get().platform_worker_id == prolific_id("real")
    assert Enrollment.objects.get().status == "active"
