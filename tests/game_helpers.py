"""Helpers for the boundary-game tests: study files and the steps of a round over HTTP."""

from __future__ import annotations

import re

LENGTH = 10
HTMX = {"HX-Request": "true"}


def sentence_text(passage: int, index: int) -> str:
    """A sentence with markers that no other sentence or page text contains."""
    return f"Passage qx{passage}z line wv{index}k reads like an ordinary sentence."


def boundary_item(
    passage: int, *, boundary: int, length: int = LENGTH, category: str = "news", **extra
) -> dict:
    payload = {
        "sentences": [sentence_text(passage, i) for i in range(length)],
        "boundary": boundary,
        "category": category,
        "model": "test-model",
        "p": 0.5,
        "decoding": {"top_k": 0},
        "seed": 7,
    }
    return {"external_id": f"p{passage}", "payload": payload, "provenance": {"system": "test-model"}, **extra}


def attention_item(number: int, *, length: int = 6, category: str = "news") -> dict:
    return {
        "external_id": f"attention-{number}",
        "attention_check": True,
        "payload": {
            "sentences": [f"Check {number}: answer human at step {i}." for i in range(length)],
            "boundary": length,
            "category": category,
        },
        "gold": {"guess": length},
    }


def boundary_study_file(
    *,
    slug: str = "game",
    items: int = 6,
    boundaries=None,
    category: str = "news",
    attention: int = 0,
    **fields,
) -> dict:
    """A public, live boundary study; item k's boundary is ``boundaries[k]`` (default k % 9 + 1)."""
    boundaries = boundaries or [k % (LENGTH - 1) + 1 for k in range(items)]
    data = {
        "slug": slug,
        "title": f"Game {slug}",
        "kind": "boundary",
        "status": "live",
        "public": True,
        "annotations_per_item": 3,
        "items_per_session": items,
        "completion_code": "GAME-DONE",
        "screenout_code": "GAME-OUT",
        "items": [boundary_item(k, boundary=boundaries[k], category=category) for k in range(items)],
    }
    data["items"] += [attention_item(n, category=category) for n in range(attention)]
    data.update(fields)
    return data


def round_id(html: str) -> int:
    match = re.search(r"/a/(\d+)/boundary/", html)
    assert match, html
    return int(match.group(1))


def start_game(client, slug: str):
    """Press Play on the landing page; returns the round page."""
    response = client.post(f"/play/s/{slug}/", follow=True)
    assert response.status_code == 200
    return response


def step_url(slug: str, assignment_id: int, step: str) -> str:
    return f"/s/{slug}/a/{assignment_id}/boundary/{step}/"


def reveal(client, slug: str, assignment_id: int, seen: int, *, htmx: bool = True):
    headers = HTMX if htmx else {}
    return client.post(step_url(slug, assignment_id, "reveal"), {"seen": seen}, headers=headers)


def guess(client, slug: str, assignment_id: int, value, *, htmx: bool = True):
    headers = HTMX if htmx else {}
    return client.post(step_url(slug, assignment_id, "guess"), {"guess": value}, headers=headers)


def answer(client, slug: str, assignment_id: int, reason: str = "It repeats itself.", categories=(), **extra):
    data = {"reason": reason, "reason_categories": list(categories), **extra}
    return client.post(step_url(slug, assignment_id, "answer"), data, headers=HTMX)


def play_round(client, slug: str, *, mark: int | None, length: int = LENGTH, reason: str = "Odd wording."):
    """Play the current round: reveal up to sentence ``mark`` and mark it (None: all human)."""
    html = client.get(f"/s/{slug}/task/", follow=True).content.decode()
    assignment_id = round_id(html)
    last = length - 1 if mark is None else mark
    for seen in range(1, last + 1):
        assert reveal(client, slug, assignment_id, seen).status_code == 200
    assert guess(client, slug, assignment_id, length if mark is None else mark).status_code == 200
    result = answer(client, slug, assignment_id, reason)
    assert result.status_code == 200, result.content.decode()
    return assignment_id, result


def play_via_services(participant, study, choose):
    """Play the participant's next round through the services (no HTTP).

    ``choose(boundary, length)`` returns the guess (``length``: all human). Returns the
    stored response, or None when the participant has nothing left to play.
    """
    from annotation.kinds.boundary.rounds import record_guess, reveal_next_sentence
    from annotation.services.participation.assignment import assign_next_item
    from annotation.services.participation.submission import submit_response

    assignment = assign_next_item(participant=participant, study=study)
    if assignment is None:
        return None
    payload = assignment.item.payload
    length = len(payload["sentences"])
    value = choose(payload["boundary"], length)
    for seen in range(1, min(value, length - 1) + 1):
        reveal_next_sentence(assignment=assignment, seen=seen)
    record_guess(assignment=assignment, guess=value)
    return submit_response(assignment=assignment, answer={"guess": value, "reason": "A guess."}).response
