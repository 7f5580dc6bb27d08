"""The documentation a researcher needs is rendered in the app, and research pages link it."""

import pytest

from tests.factories import StudyFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("name", "heading"),
    [
        ("statistics", "<h1>Statistics</h1>"),
        ("formats", "<h1>Formats</h1>"),
        ("crowd", "<h1>"),
        ("privacy", "<h1>Erasure and retention</h1>"),
    ],
)
def test_docs_are_rendered_as_html(client, researcher, name, heading):
    page = client.get(f"/research/docs/{name}/")
    assert page.status_code == 200 and heading in page.content.decode()
    article = page.content.decode().split('id="doc-')[1].split("</article>")[0]
    assert "<script" not in article and "<p>" in article


def test_unknown_docs_and_outsiders_are_refused(client, researcher, django_user_model):
    assert client.get("/research/docs/development/").status_code == 404
    client.force_login(django_user_model.objects.create_user("plain"))
    assert client.get("/research/docs/statistics/").status_code == 403


def test_research_pages_share_one_navigation_that_links_the_docs(client, researcher):
    study = StudyFactory(owner=researcher)
    base = f"/research/s/{study.slug}"
    for url in (
        f"{base}/",
        f"{base}/dashboard/",
        "/research/jobs/",
        f"{base}/participants/",
        f"{base}/adjudication/",
    ):
        html = client.get(url).content.decode()
        assert html.count('class="research-nav"') == 1, url
        assert 'href="/research/docs/statistics/"' in html
    dashboard = client.get(f"/research/s/{study.slug}/dashboard/").content.decode()
    assert "<code>docs/statistics.md</code>" not in dashboard
