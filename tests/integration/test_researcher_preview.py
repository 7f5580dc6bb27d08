"""A researcher previews every page of a draft study as a participant sees it, with a banner
and the expected answers beside it; nothing is stored."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Assignment, Enrollment, Participant, Response
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.factories import researcher_user
from tests.game_helpers import boundary_study_file

pytestmark = pytest.mark.django_db


def test_every_page_of_a_draft_with_gold_and_attention_checks_beside(owner, owner_client):
    data = claim_study_file(slug="draft", items=2, attention=1, status="draft")
    study = load_study_file(data, owner=owner).study
    overview = owner_client.get("/research/s/draft/").content.decode()
    assert 'href="/research/s/draft/preview/"' in overview
    pages = [owner_client.get(f"/research/s/draft/preview/?page={n}") for n in (1, 2, 3)]
    assert [page.status_code for page in pages] == [200, 200, 200]
    first, last = pages[0].content.decode(), pages[2].content.decode()
    assert 'id="researcher-preview"' in first and "page 1 of 3" in first
    assert "Claim number 0 holds." in first and "<fieldset disabled" in first
    assert "&quot;label&quot;: &quot;supports&quot;" in first and 'id="preview-next" href="?page=2"' in first
    assert (
        'id="preview-attention"' in last
        and "&quot;label&quot;: &quot;neutral&quot;" in last
        and "preview-next" not in last
    )
    assert "/a/" not in first and "study-submit" not in first  # nothing to post to
    assert owner_client.get("/research/s/draft/preview/?page=4").status_code == 404
    assert not Participant.objects.exists() and not Assignment.objects.exists()
    assert not Enrollment.objects.exists() and not Response.objects.exists()
    assert study.status == "draft"


def test_the_game_preview_shows_the_round_with_the_boundary_beside(owner, owner_client):
    load_study_file(boundary_study_file(slug="g", items=1, status="draft", public=False), owner=owner)
    html = owner_client.get("/research/s/g/preview/").content.decode()
    assert 'id="researcher-preview"' in html and "Person or machine?" in html and "css/game.css" in html
    assert "/boundary/" not in html and not Assignment.objects.exists()


def test_only_researchers_who_reach_the_study_preview_it(owner, owner_client, django_user_model):
    load_study_file(claim_study_file(slug="draft", status="draft"), owner=owner)
    stranger = researcher_user("sam", password="pw")
    client = Client()
    client.force_login(stranger)
    assert client.get("/research/s/draft/preview/").status_code == 404
