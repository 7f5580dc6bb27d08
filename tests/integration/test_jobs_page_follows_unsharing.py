"""Review finding 20 (adversarial review): the jobs page follows un-sharing, as the API does:
once alice stops sharing her study with bob, the jobs bob started on it vanish from his jobs
page and their rows answer 404."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from annotation.models import Study
from tests.conftest import claim_study_file

pytestmark = pytest.mark.django_db


def test_jobs_on_a_study_no_longer_shared_vanish_from_the_jobs_page(
    client, django_user_model, django_capture_on_commit_callbacks
):
    researchers = Group.objects.get_or_create(name="researchers")[0]
    alice = django_user_model.objects.create_user("alice", password="pw-alice-1")
    bob = django_user_model.objects.create_user("bob", password="pw-bob-1")
    researchers.user_set.add(alice, bob)
    client.force_login(alice)
    created = client.post(
        "/api/v1/studies/", claim_study_file(slug="alice-ranking"), content_type="application/json"
    )
    assert created.status_code == 201, created.content
    study = Study.objects.get(slug="alice-ranking", owner=alice)
    assert (
        client.patch(
            f"/api/v1/studies/{study.slug}/", {"shared_with": ["bob"]}, content_type="application/json"
        ).status_code
        == 200
    )

    client.force_login(bob)
    with django_capture_on_commit_callbacks(execute=False):
        export = client.post(
            f"/api/v1/studies/{study.slug}/exports/", {"format": "jsonl"}, content_type="application/json"
        )
        reports = client.post(
            "/api/v1/jobs/", {"kind": "reports", "study": study.slug}, content_type="application/json"
        )
    assert (export.status_code, reports.status_code) == (202, 201), (export.content, reports.content)
    ids = [export.json()["id"], reports.json()["id"]]
    page = client.get("/research/jobs/").content.decode()
    assert all(f'data-job-id="{pk}"' in page for pk in ids)

    client.force_login(alice)
    assert (
        client.patch(
            f"/api/v1/studies/{study.slug}/", {"shared_with": []}, content_type="application/json"
        ).status_code
        == 200
    )

    client.force_login(bob)
    page = client.get("/research/jobs/").content.decode()
    assert not any(f'data-job-id="{pk}"' in page for pk in ids) and "alice-ranking" not in page
    for pk in ids:
        assert client.get(f"/research/jobs/{pk}/", HTTP_HX_REQUEST="true").status_code == 404
        assert client.get(f"/api/v1/jobs/{pk}/").status_code == 404
