"""A researcher sorts the participants page by competence (the lower end of its interval)
and finds the annotator who answers at random at the top, with the figure's 95% interval and
the flag button beside them."""

import re

import pytest
from django.contrib.auth.models import Group

from annotation.models import Participant
from tests.browser_fixtures import open_signed_in
from tests.helpers.competence import SPAMMER, competence_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-test-password-42"


def test_participants_sorted_by_competence(live_server, page, screenshot, django_user_model):
    owner = django_user_model.objects.create_user("owner", password=PASSWORD)
    owner.groups.add(Group.objects.get_or_create(name="researchers")[0])
    study = competence_study(owner)
    open_signed_in(page, live_server, owner, f"/research/s/{study.slug}/participants/")
    page.wait_for_selector("#competence-header")
    page.locator("#competence-header a").click()
    page.wait_for_url("**?sort=competence")
    spammer = Participant.objects.get(platform_worker_id=SPAMMER).public_id
    first = page.locator("#participants tbody tr").first
    assert first.get_attribute("id") == f"participant-{spammer}"
    cell = first.locator("td.competence").inner_text()
    assert re.match(r"0\.\d\d \[0\.\d\d–[01]\.\d\d\]\s+\(DS ", cell), cell
    assert first.get_by_role("link", name="Flag…").count() == 1
    screenshot("participants-competence")
