"""Which participant a browser is: the crowd id on the link, then the session, then the login,
the same on the study link, consent, the gate and the game."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Enrollment, Participant
from tests.helpers.crowd_ids import prolific_id

pytestmark = pytest.mark.django_db


def test_a_logged_in_player_who_opened_a_prolific_link_stays_that_participant_on_the_plain_link(
    make_claim_study,
):
    """The study link used to prefer the login while the task pages preferred the session:
    the plain link sent the Prolific participant to consent again, and agreeing enrolled
    the account's participant instead."""
    study = make_claim_study(items=2, items_per_session=2)
    user = get_user_model().objects.create_user("player", password="pw-player-1")
    own = Participant.objects.create(user=user)
    client = Client()
    client.force_login(user)
    entry = client.get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('PID-7')}", follow=True)
    client.post(entry.redirect_chain[-1][0], {"decision": "agree"})
    prolific = Participant.objects.get(platform_worker_id=prolific_id("PID-7"))
    assert client.session["participant_id"] == prolific.pk

    plain = client.get(f"/s/{study.slug}/")
    assert plain.status_code == 302 and plain["Location"] == f"/s/{study.slug}/task/"
    assert client.get(f"/s/{study.slug}/consent/").status_code == 302  # no second consent
    assert client.get(f"/s/{study.slug}/task/").status_code == 200
    assert not Enrollment.objects.filter(participant=own).exists()
    assert client.session["participant_id"] == prolific.pk


def test_with_no_session_the_login_names_the_participant(make_claim_study):
    study = make_claim_study(items=2, items_per_session=2)
    user = get_user_model().objects.create_user("player", password="pw-player-1")
    own = Participant.objects.create(user=user)
    client = Client()
    client.force_login(user)
    entry = client.get(f"/s/{study.slug}/", follow=True)
    client.post(entry.redirect_chain[-1][0], {"decision": "agree"})
    assert Enrollment.objects.filter(participant=own, study=study).exists()
    assert client.get(f"/s/{study.slug}/task/").status_code == 200
