"""The owner asks for a Prolific review and sees, before anything is sent, who will be
approved, rejected or left and what the approvals cost; the audit log is on the same page."""

import pytest
from django.contrib.auth.models import Group
from django.test import override_settings

from annotation.models import PlatformStudy
from annotation.services.authoring.studies import load_study_file
from tests.browser_fixtures import open_signed_in
from tests.conftest import claim_study_file
from tests.helpers.fake_prolific import TOKEN, serve
from tests.helpers.platforms import BAD, GOOD, crowd_participant

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-test-password-42"


def test_review_confirmation_lists_each_decision_and_the_cost(
    live_server, page, screenshot, django_user_model
):
    owner = django_user_model.objects.create_user("owner", password=PASSWORD)
    owner.groups.add(Group.objects.get_or_create(name="researchers")[0])
    data = claim_study_file(items=6, attention=2, items_per_session=3, attention_check_rate=0.34)
    study = load_study_file(data, owner=owner).study
    PlatformStudy.objects.create(study=study, prolific_study_id="st-1", reward_cents=150)
    crowd_participant(study, "pid-good", GOOD)
    crowd_participant(study, "pid-bad", BAD)
    crowd_participant(study, "pid-half", GOOD, pages=1)

    open_signed_in(page, live_server, "owner", f"/research/s/{study.slug}/")
    page.locator("#platforms-link").click()
    page.get_by_role("button", name="Review on Prolific…").click()
    page.wait_for_selector("#confirm-summary")
    assert page.locator("#approve-count").inner_text() == "1"
    assert page.locator("#reject-count").inner_text() == "1"
    assert page.locator("#left-count").inner_text() == "1"
    assert page.locator("#total-cost").inner_text() == "1.50"
    assert page.locator("#review-plan tbody tr").count() == 3
    assert page.get_by_role("button", name="Confirm and send").is_visible()
    assert page.get_by_role("button", name="Dry run (send nothing)").is_visible()
    screenshot("platform-review-confirmation")

    fake, server = serve()
    for pid in ("pid-good", "pid-bad", "pid-half"):
        fake.add_submission("st-1", pid)
    try:
        with override_settings(PROLIFIC_API_URL=fake.url, PROLIFIC_API_TOKEN=TOKEN):
            page.get_by_role("button", name="Confirm and send").click()
            page.wait_for_selector("#audit-log")
    finally:
        server.shutdown()
        server.server_close()
    assert fake.status_of("pid-good") == "APPROVED" and fake.status_of("pid-bad") == "REJECTED"
    assert (
        page.locator("#audit-log tbody tr").count() == 4
    )  # two pages of the list, the approval, the rejection
    assert "done" in page.locator("#platform-jobs").inner_text()
    screenshot("platform-audit-log")


def test_the_page_states_the_bounds_and_names_a_cap_out_of_them(
    live_server, page, screenshot, django_user_model
):
    owner = django_user_model.objects.create_user("owner", password=PASSWORD)
    owner.groups.add(Group.objects.get_or_create(name="researchers")[0])
    study = load_study_file(claim_study_file(items=2), owner=owner).study
    PlatformStudy.objects.create(study=study, bonus_cap_cents=200)

    open_signed_in(page, live_server, "owner", f"/research/s/{study.slug}/platforms/")
    assert "at most 500.00 per participant" in page.locator("#publish-limits").inner_text()
    assert "1000.00" in page.locator("#bonus-cap-help").inner_text()
    page.fill("#bonus-cap", "1e30")
    page.locator("#bonus-cap-form").get_by_role("button", name="Save").click()
    page.wait_for_selector("text=Nothing changed")
    assert page.locator("#bonus-cap").input_value() == "2.00"
    assert PlatformStudy.objects.get(study=study).bonus_cap_cents == 200
    screenshot("platform-bonus-cap-refused")
