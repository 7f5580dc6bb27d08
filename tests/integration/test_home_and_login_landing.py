"""The home page lists a researcher's own non-public studies through the one access path
(``access.researcher_studies``), never another researcher's; and logging in lands a
researcher on their studies (``/research/``), anyone else on the home page, ``?next=``
winning for both."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.factories import researcher_user

pytestmark = pytest.mark.django_db


def draft(slug: str, title: str, owner):
    return load_study_file(claim_study_file(slug=slug, title=title, status="draft"), owner=owner).study


def test_a_staff_researcher_sees_no_other_researchers_private_study_on_the_home_page():
    alice = researcher_user("alice")
    bob = researcher_user("bob", is_staff=True)
    draft("alice-secret", "Alice secret draft", alice)
    draft("bob-draft", "Bob own draft", bob)
    browser = Client()
    browser.force_login(bob)
    page = browser.get("/").content.decode()
    assert "Bob own draft" in page and "/s/bob-draft/" in page
    assert "Alice secret draft" not in page and "alice-secret" not in page


def test_a_shared_study_is_listed_for_the_researcher_it_is_shared_with():
    alice, bob = researcher_user("alice"), researcher_user("bob")
    study = draft("ours", "Our draft", alice)
    study.shared_with.add(bob)
    browser = Client()
    browser.force_login(bob)
    assert "Our draft" in browser.get("/").content.decode()


def log_in(username: str, query: str = "") -> str:
    answer = Client().post(f"/accounts/login/{query}", {"username": username, "password": "pw-1"})
    assert answer.status_code == 302, answer.content[:300]
    return answer["Location"]


def test_a_researcher_lands_on_their_studies_after_logging_in():
    researcher_user("rita", password="pw-1")
    assert log_in("rita") == "/research/"


def test_next_wins_over_the_researchers_landing():
    researcher_user("rita", password="pw-1")
    assert log_in("rita", "?next=/research/jobs/") == "/research/jobs/"


def test_anyone_else_lands_on_the_home_page():
    get_user_model().objects.create_user("player", password="pw-1")
    assert log_in("player") == "/"
