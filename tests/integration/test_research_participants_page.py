"""Review finding 28 (adversarial review): the researchers' participants page read every
response of the study and listed every participant on one page (6.6 s at 40k responses). It is
paginated now and reads only the responses of the items the shown participants answered, in a
fixed number of queries."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.research.views import participants as research_participants
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.factories import AnsweredResponseFactory, researcher_user
from tests.queries import assert_flat, count_queries

pytestmark = pytest.mark.django_db

SUPPORTS = {"label": "supports", "evidence": [0]}
# A smaller page than the site's 50: the same pagination and the same queries per page, with
# under half the answers to store (a query per shown row would still add 20, past the bound).
PARTICIPANTS_PER_PAGE = 20


def researcher_client(django_user_model) -> tuple[Client, object]:
    user = researcher_user("rita", password="pw")
    client = Client()
    client.force_login(user)
    return client, user


def answered(study, people: range, items: list[str]) -> None:
    AnsweredResponseFactory.from_specs(
        study,
        [{"participant": f"P{n}", "item": item, "answer": SUPPORTS} for n in people for item in items],
    )


def test_participants_page_is_paginated_with_queries_flat_in_the_study_size(django_user_model, monkeypatch):
    monkeypatch.setattr(research_participants, "PARTICIPANTS_PER_PAGE", PARTICIPANTS_PER_PAGE)
    client, user = researcher_client(django_user_model)
    study = load_study_file(claim_study_file(slug="big", items=4, annotations_per_item=200), owner=user).study
    people = PARTICIPANTS_PER_PAGE + 5
    answered(study, range(people), ["c0", "c1"])
    url = "/research/s/big/participants/"
    counts = {}
    counts[1], first = count_queries(lambda: client.get(url))
    html = first.content.decode()
    assert html.count('<tr id="participant-') == PARTICIPANTS_PER_PAGE
    assert f"Page 1 of 2 ({people} in all)" in html and 'href="?page=2"' in html
    second = client.get(url + "?page=2").content.decode()
    assert second.count('<tr id="participant-') == 5
    # Three times the participants and responses (others answered the same and other items).
    answered(study, range(people, 3 * people), ["c0", "c2", "c3"])
    counts[3], again = count_queries(lambda: client.get(url))
    assert again.content.decode().count('<tr id="participant-') == PARTICIPANTS_PER_PAGE
    assert_flat(counts, at_most=12)
