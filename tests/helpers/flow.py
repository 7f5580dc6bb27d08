"""A participant's steps, shared by the page tests: start a study and find the form (over
HTTP), or answer pages straight through the services."""

import re

from annotation.models import Participant, Study
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response


def task_action(html: str) -> str:
    match = re.search(r'action="(/s/[\w-]+/a/\d+/)"', html)
    assert match, html
    return match.group(1)


def start(client, slug: str, query: str = "") -> str:
    response = client.get(f"/s/{slug}/{query}", follow=True)
    consent_url = response.redirect_chain[-1][0]
    assert consent_url.startswith(f"/s/{slug}/consent/")
    response = client.post(consent_url, follow=True)
    assert response.status_code == 200
    return response.content.decode()


def answer_pages(study: Study, participant: Participant, answer: dict, pages: int | None = None) -> list[str]:
    """Answer the next ``pages`` pages (all that are left when None) with ``answer``;
    returns the external ids of the items answered, in order."""
    answered: list[str] = []
    while pages is None or len(answered) < pages:
        assignment = assign_next_item(participant=participant, study=study)
        if assignment is None:
            break
        submit_response(assignment=assignment, answer=answer)
        answered.append(assignment.item.external_id)
    return answered
