"""One participant id across the participants page, the API and the exports; the owner sees
the platform id; flag and block take a reason (which reaches the exports) and a confirmation;
the attention-check and exam outcomes say what happened."""

from __future__ import annotations

import csv

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.models import Enrollment, Participant
from annotation.services.pseudonyms import participant_pseudonym
from tests.factories import researcher_user
from tests.helpers.crowd_ids import mturk_id, prolific_id
from tests.helpers.flow import answer_pages, task_action
from tests.helpers.platforms import crowd_participant as platform_participant

pytestmark = pytest.mark.django_db


def crowd_participant(study, pid: str) -> Participant:
    participant = Participant.objects.create(source="prolific", platform_worker_id=pid)
    Enrollment.objects.create(participant=participant, study=study, status="active")
    answer_pages(study, participant, {"label": "supports", "evidence": [0]}, pages=1)
    return participant


def test_page_api_and_export_name_the_participant_alike_and_the_owner_sees_the_prolific_id(
    make_claim_study, owner, tmp_path
):
    study = make_claim_study()
    study.owner = owner
    study.save()
    participant = crowd_participant(study, "PID-555")
    name = participant_pseudonym(study, participant)
    client = Client()
    client.force_login(owner)
    page = client.get(f"/research/s/{study.slug}/participants/").content.decode()
    assert f'class="pseudonym">{name}<' in page and '<td class="platform-id">PID-555<' in page
    api = client.get(f"/api/v1/studies/{study.slug}/participants/").json()["results"][0]
    assert api["pseudonym"] == name and api["platform_worker_id"] == "PID-555"
    path = tmp_path / "out.csv"
    call_command("exportstudy", study.slug, "--format", "csv", "--output", str(path))
    with path.open() as handle:
        assert {row["participant"] for row in csv.DictReader(handle)} == {name}


def test_a_researcher_the_study_is_shared_with_does_not_see_platform_ids(
    make_claim_study, owner, django_user_model
):
    study = make_claim_study()
    study.owner = owner
    study.save()
    crowd_participant(study, "PID-556")
    guest = researcher_user("sam", password="pw")
    study.shared_with.add(guest)
    client = Client()
    client.force_login(guest)
    assert "PID-556" not in client.get(f"/research/s/{study.slug}/participants/").content.decode()


def test_flag_asks_for_a_reason_and_a_confirmation_and_the_reason_reaches_the_export(
    make_claim_study, owner, tmp_path
):
    study = make_claim_study()
    study.owner = owner
    study.save()
    participant = crowd_participant(study, "PID-557")
    client = Client()
    client.force_login(owner)
    url = f"/research/s/{study.slug}/participants/{participant.public_id}/"
    listing = client.get(f"/research/s/{study.slug}/participants/").content.decode()
    assert f"{url}?mark=flag#mark" in listing and 'value="flag"' not in listing
    assert "?mark=block" not in listing  # blocking is an admin's act, not on this page
    form = client.get(f"{url}?mark=flag").content.decode()
    assert 'name="reason"' in form and 'name="confirm"' in form and "in this study only" in form
    refused = client.post(url, {"action": "flag", "reason": "copy-pasted answers"})
    assert refused.status_code == 400 and "Tick the box" in refused.content.decode()
    assert client.post(url, {"action": "flag", "confirm": "yes"}).status_code == 400
    assert not Enrollment.objects.get(participant=participant, study=study).flagged
    assert (
        client.post(url, {"action": "block", "reason": "x", "confirm": "yes"}, follow=True).status_code == 200
    )
    participant.refresh_from_db()
    assert not participant.blocked
    done = client.post(
        url, {"action": "flag", "reason": "copy-pasted answers", "confirm": "yes"}, follow=True
    )
    enrollment = Enrollment.objects.get(participant=participant, study=study)
    assert enrollment.flagged and enrollment.flag_reason == "copy-pasted answers"
    assert f"Participant {participant_pseudonym(study, participant)}: flagged" in done.content.decode()
    path = tmp_path / "out.csv"
    call_command("exportstudy", study.slug, "--format", "csv", "--output", str(path))
    with path.open() as handle:
        assert [row["participant_flag_reason"] for row in csv.DictReader(handle)] == ["copy-pasted answers"]


def test_failed_checks_in_a_study_that_lets_people_go_on_read_flagged_kept_playing(make_claim_study, owner):
    study = make_claim_study(items=4, attention=2, items_per_session=4, attention_check_rate=0.5)
    study.owner = owner
    study.max_attention_failures = 0
    study.save()
    participant = Participant.objects.create(source="organic")
    enrollment = Enrollment.objects.create(
        participant=participant, study=study, status="completed", attention_passed=0, attention_failed=2
    )
    client = Client()
    client.force_login(owner)
    page = client.get(f"/research/s/{study.slug}/participants/{participant.public_id}/").content.decode()
    assert 'id="attention-outcome">flagged, kept playing<' in page
    assert 'id="exam-outcome"' not in page
    assert enrollment.status == "completed"


def test_the_for_prolific_and_for_mturk_lists_give_id_status_time_and_reason(make_claim_study, owner):
    study = make_claim_study(items=2, items_per_session=1, annotations_per_item=2)
    study.owner = owner
    study.save()
    # A formula-looking id cannot come through a study link (not of Prolific's form): made
    # here as an import could, to show the list defuses it.
    platform_participant(study, "=HYPERLINK(1)", {"label": "supports", "evidence": [0]})
    flagged = Client()
    flagged.post(f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('PID-F')}", {"decision": "agree"})
    html = flagged.get(f"/s/{study.slug}/task/").content.decode()
    flagged.post(task_action(html), {"label": "supports", "evidence": "0"}, follow=True)
    worker = Client()
    worker.post(
        f"/s/{study.slug}/consent/?workerId={mturk_id('W7')}&assignmentId=A7&hitId=H7", {"decision": "agree"}
    )
    worker.post(f"/s/{study.slug}/leave/")
    researcher = Client()
    researcher.force_login(owner)
    person = Participant.objects.get(platform_worker_id=prolific_id("PID-F"))
    researcher.post(
        f"/research/s/{study.slug}/participants/{person.public_id}/",
        {"action": "flag", "reason": "straight-lined", "confirm": "yes"},
    )
    prolific = researcher.get(f"/research/s/{study.slug}/participants/for-prolific.csv")
    assert prolific["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(prolific.content.decode().splitlines()))
    by_id = {row["PROLIFIC_PID"]: row for row in rows}
    pid_f = prolific_id("PID-F")
    assert set(by_id) == {"'=HYPERLINK(1)", pid_f}  # a formula-looking id is defused
    assert by_id["'=HYPERLINK(1)"]["status"] == "completed" and by_id["'=HYPERLINK(1)"]["code"] == "DONE-123"
    assert by_id[pid_f]["status"] == "flagged" and by_id[pid_f]["reason"] == "straight-lined"
    assert by_id[pid_f]["seconds_taken"].isdigit()
    assert by_id[pid_f]["participant"] == participant_pseudonym(study, person)
    mturk = researcher.get(f"/research/s/{study.slug}/participants/for-mturk.csv").content.decode()
    (row,) = csv.DictReader(mturk.splitlines())
    assert (row["WorkerId"], row["status"], row["AssignmentId"], row["HITId"]) == (
        mturk_id("W7"),
        "returned",
        "A7",
        "H7",
    )
    assert researcher.get(f"/research/s/{study.slug}/participants/for-lab.csv").status_code == 404
