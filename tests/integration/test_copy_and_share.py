"""Issue 39: a study copied from the builder ("start from one of my studies", the overview's
*Duplicate*: settings, questions, optionally the items; never answers or codes), and shared
by role from the overview (only its owners share; each role gets what access.ROLE_ABILITIES
gives it)."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from annotation.models import Response, Study, StudyShare
from annotation.research.views.builder_form import form_values
from annotation.services.authoring.builder import as_new_study, template_of_study
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from tests.factories import ParticipantFactory, researcher_user
from tests.helpers.questionnaire import questionnaire_file

pytestmark = pytest.mark.django_db


def posted_copy(study: Study, slug: str, *, items: bool) -> dict:
    """The builder's form for a copy of ``study`` as the page fills it, with a new slug."""
    values = form_values(as_new_study(template_of_study(study)))
    fields = {
        "template": f"study:{study.slug}",
        "slug": slug,
        "use_template_items": "yes" if items else "no",
        **{name: values[name] for name in ("title", "description", "instructions", "consent")},
        **values["settings"],
    }
    fields.update({f"q_{k}": [str(q[k]) for q in values["questions"]] for k in values["questions"][0]})
    return fields


def test_a_study_is_copied_from_the_builder_with_its_items_never_its_answers_or_codes(client, researcher):
    from annotation.services.authoring.studies import load_study_file

    original = load_study_file(
        {**questionnaire_file(slug="orig"), "completion_code": "ORIG-CODE"}, owner=researcher
    ).study
    worker = ParticipantFactory(enrolled_in=original)
    page = assign_next_item(participant=worker, study=original)
    submit_response(assignment=page, answer={"better": "tie", "fluency": 2, "issue": "no"})
    start = client.get("/research/builder/").content.decode()
    assert 'id="own-studies"' in start and 'data-template="study:orig"' in start
    overview = client.get("/research/s/orig/").content.decode()
    assert 'id="duplicate-study"' in overview
    form = client.get("/research/builder/?template=study:orig").content.decode()
    assert "from your study" in form and "the study&#x27;s" in form

    saved = client.post("/research/builder/", {**posted_copy(original, "copy", items=True), "action": "save"})
    assert saved.status_code == 302, saved.content.decode()[:2000]
    copy = Study.objects.get(slug="copy")
    assert (copy.status, copy.owner, copy.completion_code) == ("draft", researcher, "")
    assert copy.config == original.config and copy.title == original.title
    assert sorted(copy.items.values_list("external_id", flat=True)) == sorted(
        original.items.values_list("external_id", flat=True)
    )
    assert not Response.objects.filter(study=copy).exists()

    without = client.post(
        "/research/builder/", {**posted_copy(original, "bare", items=False), "action": "save"}
    )
    assert without.status_code == 400 and not Study.objects.filter(slug="bare").exists()  # items to upload

    other = researcher_user("sam", password="pw")
    stranger = Client()
    stranger.force_login(other)
    assert stranger.get("/research/builder/?template=study:orig").status_code == 404


def test_sharing_by_role_from_the_overview(client, researcher):
    from annotation.services.authoring.studies import load_study_file

    study = load_study_file(questionnaire_file(slug="team"), owner=researcher).study
    worker = ParticipantFactory(enrolled_in=study)
    rita_page = client.get("/research/s/team/").content.decode()
    assert 'id="share-form"' in rita_page and 'id="no-shares"' in rita_page

    colleague = researcher_user("sam", password="pw")
    player = researcher_user("gamer", password="pw")
    player.groups.clear()
    refused = client.post("/research/s/team/sharing/", {"username": "gamer", "role": "viewer"}, follow=True)
    assert "No researcher named" in refused.content.decode()
    refused = client.post("/research/s/team/sharing/", {"username": "sam", "role": "boss"}, follow=True)
    assert "Choose one of" in refused.content.decode() and not StudyShare.objects.exists()

    client.post("/research/s/team/sharing/", {"username": "sam", "role": "viewer"})
    sam = Client()
    sam.force_login(colleague)
    assert "team" in sam.get("/research/").content.decode()
    assert sam.get("/research/s/team/").url == "/research/s/team/dashboard/"
    assert sam.get("/research/s/team/participants/").status_code == 403
    assert sam.post("/research/s/team/sharing/", {"username": "sam", "role": "owner"}).status_code == 403

    client.post("/research/s/team/sharing/", {"username": "sam", "role": "operator"})
    assert StudyShare.objects.get().role == "operator"
    overview = sam.get("/research/s/team/").content.decode()
    assert 'id="platforms-link"' in overview and 'id="edit-in-builder"' not in overview
    assert 'id="share-form"' not in overview and 'id="your-role">operator<' in overview
    flag = {"action": "flag", "reason": "straight-lining", "confirm": "yes"}
    assert sam.post(f"/research/s/team/participants/{worker.public_id}/", flag).status_code == 302
    assert sam.get("/research/s/team/edit/").status_code == 403
    assert sam.post("/research/s/team/status/", {"status": "closed"}).status_code == 302
    assert Study.objects.get(pk=study.pk).status == "closed"

    client.post("/research/s/team/sharing/", {"username": "sam", "action": "remove"})
    assert sam.get("/research/s/team/").status_code == 404


def test_a_test_run_says_so_on_every_page_and_a_participant_sees_no_banner(client, researcher):
    """U13: consent, each task page and the done page of a researcher's own study carry the
    'test run' banner; a participant's never do. An empty research home links the builder (U12)."""
    from annotation.services.authoring.studies import load_study_file

    sam = Client()
    sam.force_login(researcher_user("sam", password="pw"))
    assert 'id="empty-builder-link"' in sam.get("/research/").content.decode()

    load_study_file(questionnaire_file(slug="mine", items=1, items_per_session=1), owner=researcher)
    banner = 'id="test-run-banner"'
    assert banner in client.get("/s/mine/consent/").content.decode()
    task = client.post("/s/mine/consent/", {"decision": "agree"}, follow=True)
    assert banner in task.content.decode() and 'name="q-better"' in task.content.decode()
    answer = {"q-better": "tie", "q-fluency": "2", "q-issue": "no"}
    action = re.search(r'<form[^>]*action="(/s/mine/a/[^"]+)"', task.content.decode())[1]
    done = client.post(action, answer, follow=True)
    assert banner in done.content.decode() and 'id="test-answers"' in done.content.decode()

    participant = Client()
    assert banner not in participant.get("/s/mine/consent/").content.decode()
    page = participant.post("/s/mine/consent/", {"decision": "agree"}, follow=True)
    assert banner not in page.content.decode() and 'name="q-better"' in page.content.decode()
