"""A researcher opens the overview of an adaptive study its stopping rule closed: it says the
study is adaptive, that the rule closed it, when, and on what interval."""

import pytest

from annotation.models import Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from scoring.services import compute_study_reports
from tests.browser_fixtures import open_signed_in
from tests.factories import ParticipantFactory, researcher_user
from tests.helpers.adaptive import likert_study_file

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-test-password-42"
RATINGS = {"A": (6, 7), "B": (2, 3)}


def test_the_overview_says_why_and_when_the_study_closed(live_server, page, screenshot):
    owner = researcher_user("owner", password=PASSWORD)
    stop = {"question": "quality", "systems": ["A", "B"], "ci_excludes_zero": True, "alpha": 0.05}
    study = load_study_file(likert_study_file(stop), owner=owner).study
    for number in range(8):
        participant = ParticipantFactory(enrolled_in=study)
        while (page_ := assign_next_item(participant=participant, study=study)) is not None:
            rating = RATINGS[page_.item.provenance["system"]][number % 2]
            submit_response(assignment=page_, answer={"ratings": {"quality": rating}})
    compute_study_reports(study)
    study.refresh_from_db()
    assert study.closed_because == Study.ClosedBecause.STOPPING_RULE
    open_signed_in(page, live_server, owner, f"/research/s/{study.slug}/")
    page.wait_for_selector("#closed-because")
    closed = page.inner_text("#closed-because")
    assert "the stopping rule was met" in closed and "A less B on quality" in closed
    assert "confidence sequence" in closed and study.closed_at.strftime("%Y-%m-%d") in closed
    assignment = page.inner_text("#assignment")
    assert "adaptive" in assignment and "stops when A against B on quality differ" in assignment
    # the rule's interval at the last recompute, beside the rule (stored by the reports job)
    now = page.inner_text("#stopping-now")
    assert "now: " in now and " in [" in now and "1 look, met" in now, now
    screenshot("adaptive-overview-closed")
    page.goto(f"{live_server.url}/research/s/{study.slug}/dashboard/")
    table = page.locator("section, table").filter(has_text="Stopping rule: the difference now").first
    table.wait_for()
    assert "confidence sequence" in page.content()
    screenshot("adaptive-dashboard-stopping")
