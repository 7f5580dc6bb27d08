"""A researcher logs in through the form and lands on their studies (U27); on a study
shared with them, the overview says whose it is and offers none of the owner's buttons
(T13: sharing means reading and analysing)."""

import pytest

from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.factories import researcher_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_shared_researcher_logs_in_to_their_studies_and_reads_the_owners(live_server, page, screenshot):
    alice = researcher_user("alice", password="a-long-password-1")
    bob = researcher_user("bob", password="a-long-password-2")
    data = claim_study_file(slug="alices", title="Alice's study", items=2)
    study = load_study_file(data, owner=alice).study
    study.shared_with.add(bob)

    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "bob")
    page.fill("#id_password", "a-long-password-2")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/research/")
    page.get_by_role("link", name="Alice's study").click()
    page.wait_for_selector("#shared-read-only")
    assert "alice" in page.inner_text("#shared-read-only")
    for owners_button in ("#edit-in-builder", "button[name=status]"):
        assert page.locator(owners_button).count() == 0
    assert page.get_by_role("link", name="Preview every page").is_visible()
    screenshot("research-overview-shared")
