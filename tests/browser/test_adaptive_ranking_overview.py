"""A researcher opens the overview of a ranking study saved adaptive before adaptive
assignment was refused for studies that only rank systems: it keeps running, and the
*Assignment* line says it would be refused now and why (the measured cost)."""

import pytest

from annotation.models import Study
from annotation.services.authoring.studies import load_study_file
from tests.browser_fixtures import open_signed_in
from tests.factories import researcher_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-test-password-42"


def test_the_overview_of_an_adaptive_ranking_says_why_it_would_be_refused(
    live_server, page, screenshot, example_study_file
):
    owner = researcher_user("owner", password=PASSWORD)
    study = load_study_file({**example_study_file("ranking"), "slug": "old-rank"}, owner=owner).study
    adaptive = {"assignment": "adaptive", "adaptive": {"min_answers": 2, "budget": None, "stop": None}}
    Study.objects.filter(pk=study.pk).update(config={**study.config, **adaptive})  # saved before the rule
    open_signed_in(page, live_server, owner, f"/research/s/{study.slug}/")
    page.wait_for_selector("#adaptive-refused")
    assignment = page.inner_text("#assignment")
    assert "adaptive: the least settled items first" in assignment
    refused = page.inner_text("#adaptive-refused")
    assert "keeps running as it is" in refused and "10.3% more answers than uniform" in refused
    screenshot("adaptive-ranking-overview")
