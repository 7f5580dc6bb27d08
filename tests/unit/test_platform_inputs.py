"""The pure parts of the platform calls: the bonus file, which failures may have acted, the
rejection message's length, the token's encryption."""

from __future__ import annotations

import socket
import urllib.error
from http.client import RemoteDisconnected

import pytest
from django.test import override_settings

from annotation.errors import InputError
from annotation.models import Enrollment, Platform, ResearcherToken, Study
from annotation.platforms.audit import CallContext
from annotation.platforms.bonuses import BonusLine, parse_bonus_csv
from annotation.platforms.errors import PlatformOutcomeUnknown, PlatformUnreachable
from annotation.platforms.prolific.client import ProlificClient
from annotation.platforms.review import MIN_REJECTION_MESSAGE, rejection_message
from annotation.platforms.tokens import researcher_token, store_token
from tests.factories import researcher_user


def test_bonus_file_with_header_reasons_and_amounts_in_cents():
    lines = parse_bonus_csv("participant,amount,reason\np-1,1.50,accuracy\n5f00aa,2\n\n")
    assert lines == [BonusLine("p-1", 150, "accuracy"), BonusLine("5f00aa", 200, "")]


@pytest.mark.parametrize("amount", ["0", "-1", "1.505", "abc", "nan", "inf"])
def test_bonus_file_refuses_amounts_that_are_not_money(amount):
    with pytest.raises(InputError) as refused:
        parse_bonus_csv(f"p-1,{amount}\n")
    assert "line 1" in refused.value.summary()


def test_bonus_file_names_every_bad_line_and_refuses_an_empty_file():
    with pytest.raises(InputError) as refused:
        parse_bonus_csv("p-1\np-2,1.00,a,b\n,1.00\n")
    assert all(f"line {n}" in refused.value.summary() for n in (1, 2, 3))
    with pytest.raises(InputError, match="no bonus"):
        parse_bonus_csv("\n")


def test_a_refused_connection_sent_nothing_and_a_dropped_one_may_have_acted():
    """How the Prolific client reads a call that got no reply (the hook the call base asks)."""
    client = ProlificClient(
        context=CallContext(study=Study()), token="t", base_url="http://prolific.test", timeout=1
    )
    refused = client.unanswered(urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")))
    assert isinstance(refused, PlatformUnreachable) and not refused.maybe_done
    dropped = client.unanswered(urllib.error.URLError(RemoteDisconnected("closed")))
    assert isinstance(dropped, PlatformOutcomeUnknown) and dropped.maybe_done
    timed_out = client.unanswered(TimeoutError("timed out"))
    assert timed_out.maybe_done
    no_host = client.unanswered(urllib.error.URLError(socket.gaierror(-2, "Name or service not known")))
    assert not no_host.maybe_done


def test_the_rejection_message_is_long_enough_even_with_no_check_recorded(monkeypatch):
    monkeypatch.setattr("annotation.platforms.review.failed_checks", lambda study, enrollment: [])
    message = rejection_message(Study(max_attention_failures=0), Enrollment(attention_failed=1))
    assert len(message) >= MIN_REJECTION_MESSAGE


@pytest.mark.django_db
def test_tokens_are_encrypted_with_a_key_from_the_settings():
    user = researcher_user("rita")
    with override_settings(PLATFORM_TOKEN_KEY="", SECRET_KEY="one"):
        store_token(user, platform=Platform.PROLIFIC, token="secret-token")
        sealed = bytes(ResearcherToken.objects.get(user=user).encrypted)
        assert b"secret-token" not in sealed
        assert researcher_token(user, platform=Platform.PROLIFIC) == "secret-token"
    with override_settings(PLATFORM_TOKEN_KEY="", SECRET_KEY="two"):
        # a new secret key: the stored tokens are unreadable, so none is used
        assert researcher_token(user, platform=Platform.PROLIFIC) == ""
    with override_settings(PLATFORM_TOKEN_KEY="one", SECRET_KEY="two"):
        # the token key, when set, is the key (a secret key can then change)
        assert researcher_token(user, platform=Platform.PROLIFIC) == "secret-token"
