"""The pure parts of the platform calls: the bonus file, which failures may have acted, the
rejection message's length, the token's encryption."""

from __future__ import annotations

import socket
import urllib.error
from http.client import RemoteDisconnected

import pytest
from cryptography.fernet import InvalidToken
from django.test import override_settings

from annotation.errors import InputError
from annotation.models import Enrollment, Study
from annotation.platforms.bonuses import BonusLine, parse_bonus_csv
from annotation.platforms.errors import PlatformOutcomeUnknown, PlatformUnreachable
from annotation.platforms.prolific.client import _not_answered
from annotation.platforms.review import MIN_REJECTION_MESSAGE, rejection_message
from annotation.platforms.tokens import _fernet


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
    refused = _not_answered(urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")))
    assert isinstance(refused, PlatformUnreachable) and not refused.maybe_done
    dropped = _not_answered(urllib.error.URLError(RemoteDisconnected("closed")))
    assert isinstance(dropped, PlatformOutcomeUnknown) and dropped.maybe_done
    timed_out = _not_answered(TimeoutError("timed out"))
    assert timed_out.maybe_done
    no_host = _not_answered(urllib.error.URLError(socket.gaierror(-2, "Name or service not known")))
    assert not no_host.maybe_done


def test_the_rejection_message_is_long_enough_even_with_no_check_recorded(monkeypatch):
    monkeypatch.setattr("annotation.platforms.review.failed_checks", lambda study, enrollment: [])
    message = rejection_message(Study(max_attention_failures=0), Enrollment(attention_failed=1))
    assert len(message) >= MIN_REJECTION_MESSAGE


def test_tokens_are_encrypted_with_a_key_from_the_settings():
    with override_settings(PLATFORM_TOKEN_KEY="", SECRET_KEY="one"):
        sealed = _fernet().encrypt(b"secret-token")
        assert b"secret-token" not in sealed and _fernet().decrypt(sealed) == b"secret-token"
    with override_settings(PLATFORM_TOKEN_KEY="", SECRET_KEY="two"), pytest.raises(InvalidToken):
        _fernet().decrypt(sealed)  # a new secret key: the stored tokens are unreadable
