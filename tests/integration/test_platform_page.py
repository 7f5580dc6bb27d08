"""The study's Prolific & MTurk page and the REST API's platform jobs, through HTTP: a
confirmation with counts and cost before anything is sent, the owner only, the token stored
encrypted and never shown, the audit log on the page."""

from __future__ import annotations

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from annotation.models import Job, Platform, PlatformCall, PlatformStudy, ResearcherToken
from annotation.platforms.tokens import researcher_token
from tests.factories import researcher_user
from tests.helpers.fake_prolific import TOKEN
from tests.helpers.platforms import BAD, GOOD, crowd_participant

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake_prolific_without_a_site_token(fake_prolific, settings):
    """The Prolific stand-in with no site-wide token: a call has only the researcher's own."""
    settings.PROLIFIC_API_TOKEN = ""
    return fake_prolific


def test_review_confirmation_shows_counts_and_confirming_sends_with_the_owners_token(
    client,
    researcher,
    researchers_crowd_study,
    fake_prolific_without_a_site_token,
    django_capture_on_commit_callbacks,
):
    study = researchers_crowd_study
    page = client.post(
        f"/research/s/{study.slug}/platforms/settings/", {"prolific_token": TOKEN}, follow=True
    )
    assert TOKEN not in page.content.decode()  # stored, never shown again
    assert bytes(ResearcherToken.objects.get().encrypted).find(TOKEN.encode()) == -1
    assert researcher_token(researcher, platform=Platform.PROLIFIC) == TOKEN

    PlatformStudy.objects.filter(study=study).update(prolific_study_id="st-1", reward_cents=150)
    crowd_participant(study, "pid-good", GOOD)
    crowd_participant(study, "pid-bad", BAD)
    crowd_participant(study, "pid-half", GOOD, pages=1)
    for pid in ("pid-good", "pid-bad", "pid-half"):
        fake_prolific_without_a_site_token.add_submission("st-1", pid)

    confirm = client.post(f"/research/s/{study.slug}/platforms/prolific/review/").content.decode()
    assert 'id="approve-count">1<' in confirm and 'id="reject-count">1<' in confirm
    assert 'id="left-count">1<' in confirm and 'id="total-cost">1.50<' in confirm
    assert fake_prolific_without_a_site_token.calls == []  # the confirmation sends nothing

    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/research/s/{study.slug}/platforms/prolific/review/", {"confirm": "yes"})
    job = Job.objects.get(kind="prolific_review")
    assert job.status == "done" and job.created_by == researcher
    assert (
        fake_prolific_without_a_site_token.status_of("pid-good") == "APPROVED"
        and fake_prolific_without_a_site_token.status_of("pid-bad") == "REJECTED"
    )
    assert set(PlatformCall.objects.values_list("user", flat=True)) == {researcher.pk}

    audit = client.get(f"/research/s/{study.slug}/platforms/").content.decode()
    assert 'id="audit-log"' in audit and "/api/v1/submissions/sub-1/transition/" in audit
    assert TOKEN not in audit


def test_bonus_confirmation_shows_the_total_and_refuses_past_the_cap(
    client, researchers_crowd_study, fake_prolific_without_a_site_token
):
    study = researchers_crowd_study
    crowd_participant(study, "pid-good", GOOD)
    client.post(f"/research/s/{study.slug}/platforms/settings/", {"bonus_cap": "2.00"})
    assert PlatformStudy.objects.get(study=study).bonus_cap_cents == 200
    confirm = client.post(
        f"/research/s/{study.slug}/platforms/prolific/bonus/", {"bonuses": "pid-good,1.25,accuracy\n"}
    )
    assert 'id="total-cost">1.25<' in confirm.content.decode()
    refused = client.post(
        f"/research/s/{study.slug}/platforms/prolific/bonus/",
        {"bonuses": "pid-good,2.50,accuracy\n"},
        follow=True,
    )
    assert "cap of 2.00" in refused.content.decode() and fake_prolific_without_a_site_token.calls == []


def test_only_the_owner_reaches_the_page_and_starts_platform_jobs(client, researchers_crowd_study):
    colleague = researcher_user("colleague", password="pw")
    researchers_crowd_study.shared_with.add(colleague)
    client.force_login(colleague)
    # an analyst reaches the study but not its crowd side: refused by role, as on every page
    assert client.get(f"/research/s/{researchers_crowd_study.slug}/platforms/").status_code == 403
    assert (
        client.post(f"/research/s/{researchers_crowd_study.slug}/platforms/prolific/review/").status_code
        == 403
    )
    api = APIClient()
    api.force_authenticate(colleague)
    answer = api.post(
        "/api/v1/jobs/",
        {"kind": "prolific_review", "study": researchers_crowd_study.slug, "parameters": {"dry_run": True}},
        format="json",
    )
    assert answer.status_code == 403 and not Job.objects.exists()


def test_the_owner_starts_a_dry_run_through_the_api(
    researchers_crowd_study,
    researcher,
    fake_prolific_without_a_site_token,
    django_capture_on_commit_callbacks,
):
    PlatformStudy.objects.create(study=researchers_crowd_study, prolific_study_id="st-1")
    api = APIClient()
    api.force_authenticate(researcher)
    with override_settings(PROLIFIC_API_TOKEN=TOKEN), django_capture_on_commit_callbacks(execute=True):
        answer = api.post(
            "/api/v1/jobs/",
            {
                "kind": "prolific_review",
                "study": researchers_crowd_study.slug,
                "parameters": {"dry_run": True},
            },
            format="json",
        )
    assert answer.status_code == 201
    job = Job.objects.get()
    assert job.status == "done" and fake_prolific_without_a_site_token.calls == [
        ("GET", "/api/v1/submissions/")
    ]
    assert TOKEN not in answer.content.decode()


def test_publish_from_the_page_links_to_site_url_and_says_before_confirm_when_it_cannot(
    client, researcher, researchers_crowd_study, fake_prolific, settings, django_capture_on_commit_callbacks
):
    """Issue 39 (U3, U5): the study link comes from SITE_URL, not from the address the page
    was opened at (here ``testserver``); an unreachable SITE_URL is said on the page and on
    the confirmation, which then offers no Confirm. The reward field names its unit."""
    study = researchers_crowd_study
    form = {"reward": "1.50", "minutes": "10", "places": "3"}
    settings.SITE_URL = "http://127.0.0.1:8000"
    page = client.get(f"/research/s/{study.slug}/platforms/").content.decode()
    assert 'id="link-problem"' in page and "127.0.0.1" in page and "reward in £" in page
    confirm = client.post(f"/research/s/{study.slug}/platforms/prolific/publish/", form).content.decode()
    assert 'id="link-problem"' in confirm and 'id="confirm-button"' not in confirm

    settings.SITE_URL = "https://lab.example.org"
    page = client.get(f"/research/s/{study.slug}/platforms/").content.decode()
    assert 'id="link-problem"' not in page and f"https://lab.example.org/s/{study.slug}/" in page
    confirm = client.post(f"/research/s/{study.slug}/platforms/prolific/publish/", form).content.decode()
    assert 'id="confirm-button"' in confirm and 'id="total-cost">4.50<' in confirm
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/research/s/{study.slug}/platforms/prolific/publish/", {**form, "confirm": "yes"})
    job = Job.objects.get(kind="prolific_publish")
    assert job.status == "done", job.error
    [sent] = fake_prolific.studies.values()
    assert sent["external_study_url"].startswith(f"https://lab.example.org/s/{study.slug}/?PROLIFIC_PID=")
    assert sent["reward"] == 150


def test_review_before_publishing_says_so_on_the_confirmation(client, researchers_crowd_study):
    """U4: the reason is on the confirmation page, before Confirm, not only in the jobs list."""
    crowd_participant(researchers_crowd_study, "pid-good", GOOD)
    page = client.post(f"/research/s/{researchers_crowd_study.slug}/platforms/prolific/review/")
    html = page.content.decode()
    assert 'id="not-yet-on"' in html and "not on Prolific yet" in html and 'id="confirm-button"' not in html


def test_the_command_uses_the_owners_stored_token(
    client, researcher, researchers_crowd_study, fake_prolific_without_a_site_token
):
    """U6: with no --owner and no site token, ``prolific review`` calls with the token the
    study's owner stored on the page."""
    import io

    from django.core.management import call_command

    study = researchers_crowd_study
    client.post(f"/research/s/{study.slug}/platforms/settings/", {"prolific_token": TOKEN})
    PlatformStudy.objects.update_or_create(study=study, defaults={"prolific_study_id": "st-1"})
    call_command("prolific", "review", study.slug, "--dry-run", stdout=io.StringIO())
    job = Job.objects.get(kind="prolific_review")
    assert job.status == "done" and job.created_by == researcher, job.error
    assert fake_prolific_without_a_site_token.calls == [("GET", "/api/v1/submissions/")]
