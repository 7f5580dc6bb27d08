"""Usability defect 25: ``favicon.ico`` was a 404 on every page. Every page links our icon,
the icon is served, and ``/favicon.ico`` (asked for by pages without the link, such as the
admin) leads to it. (The login page's sign-up link, the defect's other half, is shown by
tests/integration/test_game_end.py::test_home_cards_for_the_game_lead_to_play_and_login_links_to_sign_up.)"""

import re

import pytest

pytestmark = pytest.mark.django_db


def served(client, url: str) -> bytes:
    response = client.get(url, follow=True)
    assert response.status_code == 200, url
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.mark.parametrize("url", ["/", "/accounts/login/", "/play/", "/research/"])
def test_every_page_links_an_icon_that_is_served(client, django_user_model, url):
    if url == "/research/":
        client.force_login(django_user_model.objects.create_user("sam", password="pw-sam-123", is_staff=True))
    html = served(client, url).decode()
    link = re.search(r'<link rel="icon" href="([^"]+)" type="image/svg\+xml">', html)
    assert link, url
    assert served(client, link.group(1)).startswith(b"<svg")


def test_favicon_ico_leads_to_the_icon(client):
    assert served(client, "/favicon.ico").startswith(b"<svg")
