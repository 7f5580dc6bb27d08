"""Usability defect 01: the admin saved a live study's kind changed to another kind, or to
"nonsense", and participants got a 500. The admin now refuses both, naming the field, and the
participant's page keeps working. (A change to another known kind is shown refused by
tests/api/test_one_validation.py::test_admin_refuses_a_kind_change_once_the_study_has_items.)"""

import pytest
from django.test import Client

from annotation.models import Study
from tests.helpers.admin import admin_form_data, form_errors
from tests.helpers.crowd_ids import prolific_id

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("kind", ["likert", "nonsense"])
def test_the_admin_keeps_a_live_studys_kind_and_participants_keep_their_page(
    client, superuser, make_claim_study, kind
):
    study = make_claim_study(items=2)
    client.force_login(superuser)
    answer = client.post(
        f"/admin/annotation/study/{study.pk}/change/", admin_form_data(Study, study, superuser, kind=kind)
    )
    assert "kind" in form_errors(answer)
    assert Study.objects.get(pk=study.pk).kind == "claim"
    participant = Client()
    participant.post(f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('p1')}", {"decision": "agree"})
    assert participant.get(f"/s/{study.slug}/task/").status_code == 200


def test_a_new_study_of_an_unknown_kind_is_refused(client, superuser):
    client.force_login(superuser)
    answer = client.post(
        "/admin/annotation/study/add/",
        {
            "slug": "odd",
            "title": "Odd",
            "kind": "nonsense",
            "config": "{}",
            "status": "draft",
            "annotations_per_item": 1,
            "items_per_session": 1,
        },
    )
    errors = form_errors(answer)
    assert "nonsense" in errors and not Study.objects.filter(slug="odd").exists()
