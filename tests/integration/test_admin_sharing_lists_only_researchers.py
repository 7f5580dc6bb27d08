"""Usability defect 18: the admin's *Owner* and *Shared with* lists offered every account,
game players included. They offer only researchers (staff, admins, the researchers group),
the accounts ``is_researcher`` says yes to, and the admin refuses a player sent anyway."""

import re

import pytest

from annotation.models import Study
from tests.factories import researcher_user

pytestmark = pytest.mark.django_db


def options(html: str, field: str) -> set[str]:
    select = re.search(rf'<select[^>]*name="{field}"[^>]*>(.*?)</select>', html, re.S)
    assert select, field
    return set(re.findall(r"<option[^>]*>([^<]+)</option>", select.group(1))) - {"---------"}


def test_owner_and_shared_with_offer_only_researchers(client, django_user_model, make_claim_study):
    from tests.helpers.admin import admin_form_data

    root = django_user_model.objects.create_superuser("root", "", "pw-for-tests-only")
    rita = researcher_user("rita", password="pw-rita-123")
    django_user_model.objects.create_user("sam", password="pw-sam-123", is_staff=True)
    player = django_user_model.objects.create_user("gamer", password="pw-gamer-123")
    django_user_model.objects.create_user("gone", password="pw-gone-123", is_staff=True, is_active=False)
    study = make_claim_study()
    client.force_login(root)
    html = client.get(f"/admin/annotation/study/{study.pk}/change/").content.decode()
    assert options(html, "owner") == {"root", "rita", "sam"}
    # The shares are an inline, one row per researcher and role (issue 39).
    assert options(html, "shares-0-user") == {"root", "rita", "sam"}

    data = admin_form_data(Study, study, root)
    refused = {**data, "shares-TOTAL_FORMS": 1, "shares-0-user": player.pk, "shares-0-role": "viewer"}
    response = client.post(f"/admin/annotation/study/{study.pk}/change/", refused)
    assert response.status_code == 200  # the form again, with the error
    assert not study.shared_with.exists()
    shared = {**data, "shares-TOTAL_FORMS": 1, "shares-0-user": rita.pk, "shares-0-role": "operator"}
    assert client.post(f"/admin/annotation/study/{study.pk}/change/", shared).status_code == 302
    assert list(study.shares.values_list("user__username", "role")) == [("rita", "operator")]
