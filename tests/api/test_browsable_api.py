"""Review finding 15 (adversarial review): a logged-in researcher opening an API list or detail
address in a browser (``Accept: text/html`` or ``?format=api``) got a 500, because DRF's
browsable renderer asked our views for a ``queryset`` they do not have."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

# The users and the owned study are written once for the module (tests/api/conftest.py).
ROWS_FOR_THE_MODULE = True


BROWSER = {"HTTP_ACCEPT": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/studies/",
        "/api/v1/studies/owned/",
        "/api/v1/studies/owned/items/",
        "/api/v1/jobs/",
        "/api/v1/job-kinds/",
        "/api/v1/responses/",
    ],
)
def test_the_browsable_api_answers_a_logged_in_researcher(client, users, owned_study, path):
    client.force_login(users["owner"])
    page = client.get(path, **BROWSER)
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    assert client.get(f"{path}?format=api").status_code == 200
    assert client.get(path, HTTP_ACCEPT="application/json").json()  # scripts still get JSON
