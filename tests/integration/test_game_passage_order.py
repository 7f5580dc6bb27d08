"""Review finding 2 (adversarial review): every new game player got the same passages in the
same order, so a second session could replay a first session's answers to the top of the
leaderboard.

Among equally filled passages the pick is random per player (``pick_draw``, seeded per
participant and page), and the least-filled passages come first: twenty guests starting
the same category through HTTP get twenty different sequences.
"""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client

from annotation.services.authoring.studies import load_study_file
from tests.game_helpers import answer, boundary_study_file, guess, reveal, round_id, start_game

pytestmark = pytest.mark.django_db

GUESTS, ROUNDS = 20, 5


def passage_of(html: str) -> str:
    """The passage a round page shows, by the marker in its first sentence."""
    match = re.search(r"Passage (qx\d+z)", html)
    assert match, html
    return match.group(1)


def first_passages(slug: str) -> tuple[str, ...]:
    """A new guest (a fresh browser) plays ``ROUNDS`` rounds; the passages, in order."""
    client = Client()
    start_game(client, slug)
    passages = []
    for _ in range(ROUNDS):
        page = client.get(f"/s/{slug}/task/")
        assert page.status_code == 200
        passages.append(passage_of(page.content.decode()))
        number = round_id(page.content.decode())  # the shortest round: one reveal, then a guess
        assert reveal(client, slug, number, 1).status_code == 200
        assert guess(client, slug, number, 1).status_code == 200
        assert answer(client, slug, number).status_code == 200
    return tuple(passages)


def test_twenty_guests_do_not_share_an_order_of_passages():
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.2)")  # the items' random keys, reproducibly
    load_study_file(boundary_study_file(slug="news-game", items=30, annotations_per_item=50))
    orders = [first_passages("news-game") for _ in range(GUESTS)]
    assert len({order[0] for order in orders}) > 1, "every guest started with the same passage"
    assert len(set(orders)) == GUESTS, "two guests got the same five passages in the same order"
