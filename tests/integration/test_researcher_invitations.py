"""Researcher accounts by invitation: staff make a one-time link, the invitee opens it,
chooses a username and password and reaches the research pages; a used, expired or
unknown link, or a refused password, creates nothing."""

from __future__ import annotations

import importlib
import re
from datetime import timedelta

import pytest
from django.apps import apps as django_apps
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.core.management.sql import emit_post_migrate_signal
from django.test import Client
from django.utils import timezone

from annotation.models import ResearcherInvitation
from annotation.services.access import is_researcher
from annotation.services.authoring.invitations import invitation_create, token_hash
from tests.factories import researcher_user
from tests.threads import run_in_threads

pytestmark = pytest.mark.django_db

GOOD_PASSWORD = "tarn-lichen-47-orbit"
# The token rides in the link's fragment, never in its path (adversarial review 3, T12).
LINK = re.compile(r"https?://[^\"<\s#]+/research/join/#([A-Za-z0-9_-]+)")
JOIN = "/research/join/"


@pytest.fixture
def staff_client(django_user_model):
    client = Client()
    client.force_login(django_user_model.objects.create_user("stella", is_staff=True))
    return client


def invite(staff_client, email: str = "") -> str:
    """The token of the link the staff page shows once, after making an invitation."""
    answer = staff_client.post("/research/invitations/", {"email": email})
    assert answer.status_code == 200
    return LINK.search(answer.content.decode()).group(1)


def open_link(token: str, client: Client | None = None):
    """What the join page's script does with the link's fragment: post the token."""
    return (client or Client()).post(JOIN, {"token": token})


def join(token: str, username: str, password: str = GOOD_PASSWORD, again: str | None = None):
    data = {"token": token, "username": username, "password1": password, "password2": again or password}
    return Client().post(JOIN, data)


def test_the_researchers_group_exists_after_migrate_and_the_migration_is_idempotent():
    assert Group.objects.filter(name="researchers").count() == 1
    migration = importlib.import_module("annotation.migrations.0014_researchers")
    migration.create_researchers_group(django_apps, None)
    migration.create_researchers_group(django_apps, None)
    assert Group.objects.filter(name="researchers").count() == 1


def test_every_migrate_and_flush_brings_the_researchers_group_back():
    Group.objects.filter(name="researchers").delete()
    emit_post_migrate_signal(0, False, "default")  # what migrate and flush send at their end
    assert Group.objects.filter(name="researchers").count() == 1


def test_an_invitee_joins_and_reaches_the_research_pages(staff_client, django_user_model):
    token = invite(staff_client, email="nora@example.org")
    invitation = ResearcherInvitation.objects.get()
    assert invitation.token_hash == token_hash(token) != token  # only the hash is stored

    invitee = Client()
    start = invitee.get(JOIN)
    assert start.status_code == 200 and b'name="token"' in start.content
    form = open_link(token, invitee)
    assert form.status_code == 200 and b"Create your researcher account" in form.content
    account = {"token": token, "username": "nora", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD}
    answer = invitee.post(JOIN, account)
    assert answer.status_code == 302 and answer["Location"] == "/research/"
    home = invitee.get("/research/")
    assert home.status_code == 200 and b"Welcome, nora" in home.content
    assert invitee.get("/research/studies/new/").status_code == 200

    nora = django_user_model.objects.get(username="nora")
    assert is_researcher(nora) and not nora.is_staff
    assert nora.email == "nora@example.org" and nora.check_password(GOOD_PASSWORD)
    invitation.refresh_from_db()
    assert invitation.accepted_by == nora and invitation.accepted_at is not None

    # The staff page never shows the link again; it says who used it.
    listing = staff_client.get("/research/invitations/").content.decode()
    assert token not in listing and "used by nora" in listing


def test_a_used_link_is_refused_and_creates_nothing(staff_client, django_user_model):
    token = invite(staff_client)
    assert join(token, "first").status_code == 302
    again = join(token, "second")
    assert again.status_code == 410
    assert b"already been used" in again.content
    assert open_link(token).status_code == 410
    assert not django_user_model.objects.filter(username="second").exists()


def test_an_expired_link_is_refused_and_creates_nothing(staff_client, django_user_model):
    token = invite(staff_client)
    ResearcherInvitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    shown = open_link(token)
    assert shown.status_code == 410 and b"has expired" in shown.content
    assert join(token, "late").status_code == 410
    assert not django_user_model.objects.filter(username="late").exists()
    assert ResearcherInvitation.objects.get().accepted_at is None


def test_an_unknown_link_is_refused(django_user_model):
    answer = join("not-a-real-token", "guess")
    assert answer.status_code == 404 and b"not valid" in answer.content
    assert not django_user_model.objects.filter(username="guess").exists()


def test_a_refused_password_names_the_field_and_creates_nothing(staff_client, django_user_model):
    token = invite(staff_client)
    answer = join(token, "weak", password="12345")
    assert answer.status_code == 400
    errors = answer.context["form"].errors
    assert "password1" in errors and any("too short" in message for message in errors["password1"])
    assert b"too short" in answer.content
    assert not django_user_model.objects.filter(username="weak").exists()
    assert ResearcherInvitation.objects.get().accepted_at is None
    # The link still works once the password is fixed.
    assert join(token, "weak", password=GOOD_PASSWORD).status_code == 302


def test_a_taken_username_or_mismatched_passwords_name_their_field(staff_client, django_user_model):
    django_user_model.objects.create_user("taken")
    token = invite(staff_client)
    assert "username" in join(token, "Taken").context["form"].errors
    assert "password2" in join(token, "fresh", again=GOOD_PASSWORD + "x").context["form"].errors
    assert not django_user_model.objects.filter(username="fresh").exists()
    assert ResearcherInvitation.objects.get().accepted_at is None


def test_only_staff_make_invitations(django_user_model):
    member = researcher_user("rex")
    client = Client()
    assert client.get("/research/invitations/").status_code == 302  # anonymous: log in first
    client.force_login(member)
    assert client.get("/research/invitations/").status_code == 403
    assert client.post("/research/invitations/", {"email": ""}).status_code == 403
    assert b"/research/invitations/" not in client.get("/research/").content  # no menu entry
    assert not ResearcherInvitation.objects.exists()
    with pytest.raises(PermissionDenied):
        invitation_create(created_by=member)
    assert not ResearcherInvitation.objects.exists()


def test_a_malformed_email_is_refused(staff_client):
    answer = staff_client.post("/research/invitations/", {"email": "not an address"})
    assert answer.status_code == 400 and b"email" in answer.content
    assert not ResearcherInvitation.objects.exists()


def test_the_admin_lists_invitations_without_their_links(staff_client, django_user_model):
    token = invite(staff_client, email="ola@example.org")
    admin = Client()
    admin.force_login(django_user_model.objects.create_superuser("root", "", "root-password-1"))
    listing = admin.get("/admin/annotation/researcherinvitation/")
    assert listing.status_code == 200 and b"ola@example.org" in listing.content
    assert token.encode() not in listing.content
    assert admin.get("/admin/annotation/researcherinvitation/add/").status_code == 403


@pytest.mark.django_db(transaction=True)
def test_two_people_racing_with_one_link_get_one_account(django_user_model):
    staff = django_user_model.objects.create_user("stella", is_staff=True)
    token = invitation_create(created_by=staff).token
    answers: list[int] = []

    def accept(usernames: list[str]) -> None:
        for username in usernames:
            answers.append(join(token, username).status_code)

    run_in_threads(accept, ["racer1", "racer2", "racer3", "racer4"], threads=4)
    assert sorted(answers) == [302, 410, 410, 410]
    assert django_user_model.objects.filter(username__startswith="racer").count() == 1


def test_the_token_is_in_no_requests_path_and_an_old_link_still_works(staff_client, django_user_model):
    """Adversarial review 3, T12: the token sat in the link's path, so in the access log (22
    lines for one invitation). Now the link carries it in the fragment, which no request
    sends; the page posts it. An old-style link is sent on to the new page, token in the
    fragment, and still makes its one account."""
    answer = staff_client.post("/research/invitations/", {"email": ""})
    link = LINK.search(answer.content.decode()).group(0)
    token = LINK.search(link).group(1)
    path, fragment = link.split("#")
    assert token not in path and fragment == token
    old = Client().get(f"/research/join/{token}/")
    assert old.status_code == 302 and old["Location"] == f"{JOIN}#{token}"
    assert join(token, "olga").status_code == 302
    assert Client().get(f"/research/join/{token}/")["Location"] == f"{JOIN}#{token}"
    assert open_link(token).status_code == 410  # still one account per link


@pytest.mark.parametrize("pasted", ["{link}", "  {token}  ", "{origin}/research/join/{token}/"])
def test_without_scripts_the_invitee_pastes_the_link_or_the_token(staff_client, django_user_model, pasted):
    answer = staff_client.post("/research/invitations/", {"email": ""})
    link = LINK.search(answer.content.decode()).group(0)
    token = LINK.search(link).group(1)
    origin = link.split("/research/")[0]
    typed = pasted.format(link=link, token=token, origin=origin)
    form = Client().post(JOIN, {"token": typed})
    assert form.status_code == 200 and b"Create your researcher account" in form.content
    assert join(typed, "paula").status_code == 302
    assert django_user_model.objects.filter(username="paula").exists()
