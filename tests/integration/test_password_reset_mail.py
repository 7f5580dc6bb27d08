"""Adversarial review 3, N19: the password reset said "sent" with no mail configured (the log
showed the SMTP connection refused). Now mail comes from the environment (docs/deploy.md,
"Mail"), and a reset that could not send says so plainly, with what to do instead."""

from __future__ import annotations

import socket

import pytest
from django.core import mail

pytestmark = pytest.mark.django_db

RESET = "/accounts/password_reset/"
NO_MAIL = "No mail could be sent, so no reset link went out."


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", "alice@example.org", "pw-alice-1")


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_without_mail_the_page_says_no_mail_can_be_sent_and_what_to_do(client, settings, alice):
    settings.EMAIL_CONFIGURED = False
    page = client.get(RESET).content.decode()
    assert NO_MAIL in page and "manage.py changepassword" in page
    answer = client.post(RESET, {"email": "alice@example.org"})
    assert answer.status_code == 503
    text = answer.content.decode()
    assert NO_MAIL in text and "no mail server configured" in text and "manage.py changepassword" in text
    assert "sent" not in text.replace(NO_MAIL, "").replace("could not be sent", "")
    assert mail.outbox == []


def test_with_mail_the_link_goes_out_and_the_page_says_so(client, settings, alice):
    settings.EMAIL_CONFIGURED = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.DEFAULT_FROM_EMAIL = "eval@example.org"
    assert NO_MAIL not in client.get(RESET).content.decode()
    answer = client.post(RESET, {"email": "alice@example.org"})
    assert answer.status_code == 302 and answer["Location"] == "/accounts/password_reset/done/"
    assert [message.to for message in mail.outbox] == [["alice@example.org"]]
    assert mail.outbox[0].from_email == "eval@example.org" and "/accounts/reset/" in mail.outbox[0].body


def test_a_mail_server_that_cannot_be_reached_is_said_so_for_any_address(client, settings, alice):
    """The connection is tried first, so the answer is the same whether the address has an
    account or not (no way to learn who has one)."""
    settings.EMAIL_CONFIGURED = True
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", unused_port()
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    known = client.post(RESET, {"email": "alice@example.org"})
    unknown = client.post(RESET, {"email": "nobody@example.org"})
    for answer in (known, unknown):
        assert answer.status_code == 503
        text = answer.content.decode()
        assert NO_MAIL in text and "could not be reached" in text and "manage.py changepassword" in text
