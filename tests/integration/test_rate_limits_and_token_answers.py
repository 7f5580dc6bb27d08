"""Review finding 23 (adversarial review): the token endpoint answers every failed attempt the
same (a participant's right password is not confirmed), and the token, the login form and the
participant entry are rate limited per client address (counted in Redis, shared by every web
process)."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from tests.factories import researcher_user
from tests.helpers.crowd_ids import prolific_id

pytestmark = pytest.mark.django_db

TOKEN = "/api/v1/auth/token/"


@pytest.fixture
def alice_and_carol(django_user_model):
    researcher_user("alice", password="pw-alice-1")
    django_user_model.objects.create_user("carol", password="pw-carol-1")  # a participant's account
    cache.clear()
    yield
    cache.clear()


def test_a_participants_right_password_gets_the_same_answer_as_a_wrong_one(client, alice_and_carol):
    right = client.post(
        TOKEN, {"username": "carol", "password": "pw-carol-1"}, content_type="application/json"
    )
    wrong = client.post(TOKEN, {"username": "carol", "password": "nope"}, content_type="application/json")
    nobody = client.post(TOKEN, {"username": "nobody", "password": "x"}, content_type="application/json")
    assert right.status_code == wrong.status_code == nobody.status_code == 400
    assert right.json() == wrong.json() == nobody.json()


def test_the_token_endpoint_is_throttled_per_address(client, alice_and_carol, settings):
    settings.RATE_LIMIT_TOKEN = "5/min"
    attacker = {"REMOTE_ADDR": "203.0.113.7"}
    answers = [
        client.post(TOKEN, {"username": "alice", "password": f"guess-{n}"}, "application/json", **attacker)
        for n in range(5)
    ]
    assert [a.status_code for a in answers] == [400] * 5
    right = client.post(
        TOKEN, {"username": "alice", "password": "pw-alice-1"}, "application/json", **attacker
    )
    assert right.status_code == 429 and "token" not in right.json()
    other_address = client.post(
        TOKEN, {"username": "alice", "password": "pw-alice-1"}, "application/json", REMOTE_ADDR="198.51.100.2"
    )
    assert other_address.status_code == 200


def test_the_login_form_is_rate_limited(client, alice_and_carol, settings):
    settings.RATE_LIMIT_LOGIN = "5/min"
    attacker = {"REMOTE_ADDR": "203.0.113.8"}
    for n in range(5):
        page = client.post("/accounts/login/", {"username": "alice", "password": f"guess-{n}"}, **attacker)
        assert page.status_code == 200  # the form again, with its error
    blocked = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice-1"}, **attacker)
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) >= 1
    assert "_auth_user_id" not in client.session
    assert client.get("/accounts/login/", **attacker).status_code == 200  # reading the form is not limited


def test_participant_entry_is_rate_limited(client, alice_and_carol, settings, make_claim_study):
    settings.RATE_LIMIT_ENTRY = "3/min"
    study = make_claim_study(slug="open-study")
    crowd = {"REMOTE_ADDR": "203.0.113.9"}
    entries = [
        client.get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id(f'pid{n}')}", **crowd).status_code
        for n in range(3)
    ]
    assert 429 not in entries
    assert client.get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('pid9')}", **crowd).status_code == 429
    assert client.get(f"/s/{study.slug}/", REMOTE_ADDR="198.51.100.3").status_code != 429


@pytest.mark.parametrize(
    ("path", "form"),
    [
        ("/admin/login/", {"username": "alice", "password": "guess"}),
        ("/play/signup/", {"username": "newbie", "password1": "Long-pw-4711", "password2": "Long-pw-4711"}),
        ("/accounts/password_reset/", {"email": "alice@example.org"}),
    ],
)
def test_admin_login_sign_up_and_password_reset_share_the_login_limit(
    client, alice_and_carol, settings, django_user_model, path, form
):
    """Review 2, N10: these forms had no limit (30 admin passwords tried, 12 accounts made)."""
    settings.RATE_LIMIT_LOGIN = "3/min"
    settings.EMAIL_CONFIGURED = True  # the reset sends its mail (to the test outbox)
    attacker = {"REMOTE_ADDR": "203.0.113.9"}
    for n in range(3):
        attempt = {**form, "username": f"{form.get('username', '')}{n}"} if "username" in form else form
        assert client.post(path, attempt, **attacker).status_code in (200, 302)
        client.logout()
    users_before = django_user_model.objects.count()
    refused = client.post(path, {**form, "username": "one-more"} if "username" in form else form, **attacker)
    assert refused.status_code == 429 and refused["Retry-After"]
    assert django_user_model.objects.count() == users_before
    assert client.post(path, form, REMOTE_ADDR="198.51.100.3").status_code in (200, 302)
