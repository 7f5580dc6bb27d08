"""A participant's steps over HTTP, shared by the page tests: start a study, find the form."""

import re


def task_action(html: str) -> str:
    match = re.search(r'action="(/s/[\w-]+/a/\d+/)"', html)
    assert match, html
    return match.group(1)


def start(client, slug: str, query: str = "") -> str:
    response = client.get(f"/s/{slug}/{query}", follow=True)
    assert response.redirect_chain[-1][0] == f"/s/{slug}/consent/"
    response = client.post(f"/s/{slug}/consent/", follow=True)
    assert response.status_code == 200
    return response.content.decode()
