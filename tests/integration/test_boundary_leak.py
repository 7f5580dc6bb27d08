"""The leak test: every byte the server sends before the guess, through the HTTP layer.

Two players play the same passage, move for move, in two studies that differ only in
where the machine took over (sentence 3 in one, sentence 8 in the other). Everything the
server sends them before the answer (status lines, headers, bodies of full pages and
htmx fragments) must be the same once the per-request noise (CSRF tokens, session
cookies, round ids, the slug) is normalised: whatever depended on the boundary, in any
form (a number, a class, a data attribute, the points), would show up as a difference.
Each step is also checked for sentences not yet revealed.
"""

import re

import pytest
from django.test import Client

from annotation.models import Response, Study
from annotation.services.authoring.studies import load_study_file
from tests.game_helpers import LENGTH, boundary_study_file, guess, reveal, round_id, sentence_text

pytestmark = pytest.mark.django_db

NOISE = [
    (re.compile(rb'name="csrfmiddlewaretoken" value="[^"]+"'), b'name="csrfmiddlewaretoken" value="T"'),
    (re.compile(rb"(csrftoken|sessionid)=[^;\s]+"), rb"\1=C"),
    (re.compile(rb"/a/\d+/"), b"/a/N/"),
    (re.compile(rb"expires=[^;\n]+"), b"expires=E"),
    (re.compile(rb"Guest [0-9a-f]{6}"), b"Guest G"),  # a guest's name comes from their random id
    # the body's length moves with the ids' digits (round 9 against round 10); the bodies
    # themselves are compared, normalised, byte for byte
    (re.compile(rb"Content-Length: \d+"), b"Content-Length: L"),
]


def raw(response) -> bytes:
    """The response as sent: status, every header, the body."""
    head = f"{response.status_code}\n".encode()
    head += b"".join(f"{name}: {value}\n".encode() for name, value in sorted(response.headers.items()))
    cookies = "".join(f"{morsel.OutputString()}\n" for morsel in response.cookies.values())
    return head + cookies.encode() + b"\n" + response.content


def normalised(data: bytes, slug: str) -> bytes:
    for pattern, replacement in NOISE:
        data = pattern.sub(replacement, data)
    return data


def play_until_guess(slug: str) -> tuple[list[bytes], int]:
    """Landing, Play, the round page, every reveal (htmx and plain), reloads, the guess.

    Returns what the server sent at each step, and the round id.
    """
    client = Client()
    sent = [raw(client.get("/play/"))]
    started = client.post(f"/play/s/{slug}/")
    sent.append(raw(started))
    page = client.get(started["Location"])
    sent.append(raw(page))
    assignment_id = round_id(page.content.decode())
    for seen in range(1, LENGTH):
        htmx = seen % 3 != 0  # every third reveal is a plain form post, then the page reloads
        response = reveal(client, slug, assignment_id, seen, htmx=htmx)
        sent.append(raw(response))
        if not htmx:
            sent.append(raw(client.get(response["Location"])))
        check_only_revealed(sent, revealed=seen + 1)
    sent.append(raw(reveal(client, slug, assignment_id, LENGTH - 1)))  # a double click: same sentence again
    sent.append(raw(guess(client, slug, assignment_id, LENGTH)))  # "all human", before the reason
    sent.append(raw(client.get(f"/s/{slug}/task/")))  # a reload with the guess pending
    sent.append(raw(client.get(f"/s/{slug}/a/{assignment_id}/boundary/result/")))  # no result yet: 404
    sent.append(raw(client.get("/play/profile/")))
    sent.append(raw(client.get("/play/leaderboard/")))
    return sent, assignment_id


def check_only_revealed(sent: list[bytes], *, revealed: int) -> None:
    everything = b"".join(sent)
    for index in range(LENGTH):
        marker = sentence_text(0, index).encode()
        assert (marker in everything) == (index < revealed), (index, revealed)


def test_nothing_before_the_guess_depends_on_the_boundary():
    runs = []
    for boundary in (3, 8):
        load_study_file(boundary_study_file(slug="leak", items=1, boundaries=[boundary]))
        sent, _ = play_until_guess("leak")
        runs.append([normalised(data, "leak") for data in sent])
        assert Response.objects.count() == 0
        Study.objects.filter(slug="leak").delete()  # the second run gets the same slug, a new item
    early, late = runs
    assert len(early) == len(late)
    for step, (a, b) in enumerate(zip(early, late, strict=True)):
        assert a == b, f"step {step} differs between boundary 3 and boundary 8"
    everything = b"".join(early)
    assert b"boundary" not in everything.lower().replace(b"/boundary/", b"")
    assert early[-3].startswith(b"404")  # the result page of an unanswered round


def test_the_truth_arrives_with_the_answer_and_only_then():
    load_study_file(boundary_study_file(slug="truth", items=1, boundaries=[3]))
    client = Client()
    page = client.post("/play/s/truth/", follow=True)
    assignment_id = round_id(page.content.decode())
    for seen in range(1, 5):
        reveal(client, "truth", assignment_id, seen)
    assert guess(client, "truth", assignment_id, 4).status_code == 200
    result = client.post(
        f"/s/truth/a/{assignment_id}/boundary/answer/", {"reason": "Odd."}, headers={"HX-Request": "true"}
    )
    html = result.content.decode()
    assert all(sentence_text(0, i) in html for i in range(LENGTH))  # now every sentence
    assert 'id="round-points">+4<' in html  # one sentence late
    assert "took over at sentence 4" in html
