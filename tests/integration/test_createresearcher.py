"""manage.py createresearcher: a researcher account from the shell, or an existing account
added to the researchers group."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.management.commands import createresearcher
from annotation.services.access import is_researcher

pytestmark = pytest.mark.django_db

GOOD_PASSWORD = "tarn-lichen-47-orbit"


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("createresearcher", *args, stdout=out)
    return out.getvalue()


def test_creates_a_researcher_with_the_password_from_the_environment(monkeypatch, django_user_model):
    monkeypatch.setenv("NEW_RESEARCHER_PASSWORD", GOOD_PASSWORD)
    output = run("ada", "--email", "ada@example.org", "--password-from-env", "NEW_RESEARCHER_PASSWORD")
    assert "Researcher ada created" in output
    ada = django_user_model.objects.get(username="ada")
    assert is_researcher(ada) and not ada.is_staff
    assert ada.check_password(GOOD_PASSWORD) and ada.email == "ada@example.org"


def test_prompts_for_the_password_twice(monkeypatch, django_user_model):
    typed = iter([GOOD_PASSWORD, GOOD_PASSWORD])
    monkeypatch.setattr(createresearcher, "getpass", lambda prompt: next(typed))
    monkeypatch.setattr(createresearcher.sys.stdin, "isatty", lambda: True, raising=False)
    run("bea")
    assert django_user_model.objects.get(username="bea").check_password(GOOD_PASSWORD)


def test_typed_passwords_that_differ_create_nothing(monkeypatch, django_user_model):
    typed = iter([GOOD_PASSWORD, GOOD_PASSWORD + "x"])
    monkeypatch.setattr(createresearcher, "getpass", lambda prompt: next(typed))
    monkeypatch.setattr(createresearcher.sys.stdin, "isatty", lambda: True, raising=False)
    with pytest.raises(CommandError, match="password \\(again\\)"):
        run("bea")
    assert not django_user_model.objects.filter(username="bea").exists()


def test_a_refused_password_names_the_field_and_creates_nothing(monkeypatch, django_user_model):
    monkeypatch.setenv("NEW_RESEARCHER_PASSWORD", "12345")
    with pytest.raises(CommandError, match="password: This password is too short"):
        run("cy", "--password-from-env", "NEW_RESEARCHER_PASSWORD")
    assert not django_user_model.objects.filter(username="cy").exists()


def test_an_unset_variable_or_a_bad_email_creates_nothing(monkeypatch, django_user_model):
    monkeypatch.delenv("NO_SUCH_VARIABLE", raising=False)
    with pytest.raises(CommandError, match="NO_SUCH_VARIABLE is not set"):
        run("dee", "--password-from-env", "NO_SUCH_VARIABLE")
    monkeypatch.setenv("NEW_RESEARCHER_PASSWORD", GOOD_PASSWORD)
    with pytest.raises(CommandError, match="email"):
        run("dee", "--email", "nope", "--password-from-env", "NEW_RESEARCHER_PASSWORD")
    assert not django_user_model.objects.filter(username="dee").exists()


def test_an_existing_account_joins_the_group_and_keeps_its_password(django_user_model):
    old = django_user_model.objects.create_user("eve", password="her-own-password-9")
    assert "added to the researchers group" in run("eve")
    old.refresh_from_db()
    assert is_researcher(old) and old.check_password("her-own-password-9")
    assert "already in the researchers group" in run("eve")


def test_without_a_terminal_it_asks_for_the_variable(monkeypatch, django_user_model):
    monkeypatch.setattr(createresearcher.sys.stdin, "isatty", lambda: False, raising=False)
    with pytest.raises(CommandError, match="--password-from-env"):
        run("fay")
    assert not django_user_model.objects.filter(username="fay").exists()
