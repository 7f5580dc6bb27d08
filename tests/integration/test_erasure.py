"""Erasing a participant (issue 41): no residue anywhere the app writes, places back in the
pool, a tombstone that names no one, who may erase, the Leave page's "delete my answers"
and the studies' retention run by the scheduled task."""

from __future__ import annotations

import io
import logging
from datetime import timedelta

import pytest
from django.apps import apps
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import models
from django.db.models.functions import Cast
from django.utils import timezone

from annotation.errors import InputError
from annotation.models import (
    Assignment,
    Enrollment,
    Erasure,
    IdempotencyKey,
    Item,
    Job,
    Participant,
    PlatformBonus,
    PlatformCall,
    PlatformDecision,
    PlatformEvent,
    PlayerStats,
    Response,
)
from annotation.services.authoring.erasure import ERASED, erase, find_enrollment
from annotation.services.authoring.studies import load_study_file
from annotation.services.exports.export import export_path, export_study
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.flags import flag_in_study
from annotation.services.participation.participants import enroll, give_consent
from annotation.services.pseudonyms import participant_pseudonym
from scoring.models import Report
from scoring.services import compute_study_reports
from tests.conftest import logged_in
from tests.factories import researcher_user
from tests.game_helpers import boundary_study_file, play_via_services
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.exams import GOLD, take_exam
from tests.helpers.flow import start
from tests.helpers.platforms import GOOD, crowd_participant
from workers.tasks.erasure import apply_retention_task

pytestmark = pytest.mark.django_db
TEXT_FIELDS = (models.CharField, models.TextField, models.JSONField)
LINKED = {"annotation.Participant", "annotation.Enrollment", "annotation.Response", "annotation.Assignment"}


def mentions(identifiers: set[str]) -> list[str]:
    """Every row of every table (the app registry: a new table cannot be forgotten) whose
    text or JSON holds one of ``identifiers``, as ``app.Model.field``."""
    found = []
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if not isinstance(field, TEXT_FIELDS):
                continue
            rows = model._default_manager.annotate(_text=Cast(field.name, models.TextField()))
            for text in identifiers:
                if rows.filter(_text__contains=text).exists():
                    found.append(f"{model._meta.label}.{field.name}")
    return found


def rows_pointing_at(keys: dict[str, set[int]]) -> list[str]:
    """Rows of any table with a key to one of the erased participant, enrollments, answers or pages."""
    found = []
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            target = field.related_model._meta.label if field.is_relation and field.related_model else ""
            linked = target in LINKED and keys[target]
            if linked and model._default_manager.filter(**{f"{field.name}__in": keys[target]}).exists():
                found.append(f"{model._meta.label}.{field.name}")
    for label, pks in keys.items():
        if apps.get_model(label)._default_manager.filter(pk__in=pks).exists():
            found.append(label)
    return found


def keys_of(participant: Participant) -> dict[str, set[int]]:
    return {
        "annotation.Participant": {participant.pk},
        "annotation.Enrollment": set(
            Enrollment.objects.filter(participant=participant).values_list("pk", flat=True)
        ),
        "annotation.Response": set(
            Response.objects.filter(participant=participant).values_list("pk", flat=True)
        ),
        "annotation.Assignment": set(
            Assignment.objects.filter(participant=participant).values_list("pk", flat=True)
        ),
    }


def exported(study, tmp_path, name: str) -> bytes:
    """The study's CSV, JSONL and SQLite exports (platform ids included), made now, concatenated."""
    data = b""
    for fmt, suffix in (("csv", "csv"), ("jsonl", "jsonl"), ("sqlite", "sqlite")):
        path = tmp_path / f"{name}.{suffix}"
        export_study(study, fmt=fmt, path=path, include_platform_ids=True)
        data += path.read_bytes()
    return data


VERAS_SUBMISSION = "60f1c0ffee5e55105a7a5b01"  # her submission's id on Prolific (SESSION_ID)


@pytest.fixture
def erasable(crowd_study, owner, settings, tmp_path):
    """The crowd study, owned by Olga, with Vera (to be erased: two answers, a page held, a flag,
    her id copied into a job, the platforms' audit log, a stored API reply, a paid bonus and a sent
    decision), Kim (who stays) and reports and an export made before."""
    settings.EXPORT_DIR = tmp_path / "exports"
    crowd_study.owner = owner
    crowd_study.save(update_fields=["owner"])
    vera = crowd_participant(
        crowd_study,
        prolific_id("vera"),
        GOOD,
        pages=2,
        session={"STUDY_ID": "st-1", "SESSION_ID": VERAS_SUBMISSION},
    )
    assert assign_next_item(participant=vera, study=crowd_study) is not None  # a page held
    flag_in_study(Enrollment.objects.get(study=crowd_study, participant=vera), reason="asked to be erased")
    crowd_participant(crowd_study, prolific_id("kim"), GOOD, pages=3)
    name = participant_pseudonym(crowd_study, vera)
    Job.objects.create(
        kind="reports", study=crowd_study, parameters={"note": vera.public_id}, result={"who": [name]}
    )
    PlatformCall.objects.create(
        study=crowd_study,
        platform="prolific",
        method="POST",
        path="/bonus",
        request_body={"csv": f"{vera.platform_worker_id},1.00"},
    )
    PlatformEvent.objects.create(  # Prolific's webhook said her submission was returned
        study=crowd_study,
        platform="prolific",
        event_id="ev-1",
        submission_id=VERAS_SUBMISSION,
        status="RETURNED",
    )
    PlatformCall.objects.create(
        study=crowd_study,
        platform="prolific",
        method="EVENT",
        path="submission.status.change",
        request_body={"participant_id": vera.platform_worker_id, "submission_id": VERAS_SUBMISSION},
    )
    IdempotencyKey.objects.create(
        user=owner, key="k1", fingerprint="f", status_code=200, body={"pseudonym": name}
    )
    PlatformBonus.objects.create(
        study=crowd_study,
        platform="prolific",
        participant=vera,
        amount_cents=50,
        state=PlatformBonus.State.PAID,
    )
    PlatformDecision.objects.create(
        study=crowd_study,
        platform="prolific",
        submission_id="sub-vera",
        participant=vera,
        action="APPROVE",
        state="sent",
    )
    compute_study_reports(crowd_study)
    before = Job.objects.create(
        kind="export", study=crowd_study, parameters={"format": "csv", "include_platform_ids": True}
    )
    export_study(crowd_study, fmt="csv", path=export_path(before), include_platform_ids=True)
    return crowd_study, vera, before


def test_an_erasure_from_the_participants_page_leaves_no_trace(
    erasable, owner, tmp_path, caplog, django_capture_on_commit_callbacks
):
    study, vera, before = erasable
    identifiers = {
        vera.public_id,
        vera.platform_worker_id,
        participant_pseudonym(study, vera),
        VERAS_SUBMISSION,
    }
    keys = keys_of(vera)
    assert mentions(identifiers) and rows_pointing_at(keys)  # the test can fail
    answers_before = Response.objects.filter(study=study).count()
    assert {r.fingerprint["responses"] for r in Report.objects.filter(study=study)} == {answers_before}
    assert vera.platform_worker_id.encode() in exported(study, tmp_path, "before")

    client = logged_in(owner)
    page = client.get(f"/research/s/{study.slug}/participants/{vera.public_id}/?mark=erase")
    assert b'id="confirm-erase"' in page.content
    unconfirmed = client.post(f"/research/s/{study.slug}/participants/{vera.public_id}/", {"action": "erase"})
    assert unconfirmed.status_code == 400 and Response.objects.filter(participant=vera).exists()
    caplog.clear()  # the refusal's "Bad Request" names the page's address (docs/privacy.md, logs)
    with caplog.at_level(logging.DEBUG), django_capture_on_commit_callbacks(execute=True):
        answer = client.post(
            f"/research/s/{study.slug}/participants/{vera.public_id}/", {"action": "erase", "confirm": "yes"}
        )
    assert answer.status_code == 302 and answer["Location"] == f"/research/s/{study.slug}/participants/"

    assert rows_pointing_at(keys) == []
    reports = Report.objects.filter(study=study)
    assert reports and {r.fingerprint["responses"] for r in reports} == {answers_before - 2}  # recomputed
    assert mentions(identifiers) == []  # reports recomputed, jobs, audit log, stored replies, tombstone
    assert Job.objects.filter(
        study=study, kind="reports", parameters__trigger="erasure", status="done"
    ).exists()
    assert ERASED in str(Job.objects.get(parameters__note=ERASED).parameters)
    data = exported(study, tmp_path, "after")
    assert data and not any(text.encode() in data for text in identifiers)
    assert not export_path(before).exists()  # the export made before held her
    Job.objects.filter(pk=before.pk).update(status="done")
    gone = client.get(f"/research/s/{study.slug}/exports/{before.pk}/download/", follow=True)
    assert "deleted when a participant was erased" in gone.content.decode()
    assert [line for line in caplog.text.splitlines() if any(t in line for t in identifiers)] == []
    file_logs = [h for h in settings.LOGGING.get("handlers", {}).values() if "File" in h.get("class", "")]
    assert file_logs == []  # the app writes no log file; one added must be covered here
    assert Enrollment.objects.filter(study=study).count() == 1  # Kim stays


def test_the_places_go_back_and_another_participant_gets_the_item(make_claim_study, owner):
    study = make_claim_study(slug="one-each", items=2, annotations_per_item=1, items_per_session=2)
    study.owner = owner
    study.save(update_fields=["owner"])
    first = crowd_participant(study, prolific_id("first"), GOOD, pages=2)
    late = crowd_participant(study, prolific_id("late"))
    assert assign_next_item(participant=late, study=study) is None
    assert sorted(Item.objects.filter(study=study).values_list("slots_taken", flat=True)) == [1, 1]
    enrollment = find_enrollment(study, platform_id=first.platform_worker_id)
    logged_in(owner).post(
        f"/research/s/{study.slug}/participants/{first.public_id}/", {"action": "erase", "confirm": "yes"}
    )
    assert not Enrollment.objects.filter(pk=enrollment.pk).exists()
    assert sorted(Item.objects.filter(study=study).values_list("slots_taken", flat=True)) == [0, 0]
    assert assign_next_item(participant=late, study=study) is not None


def test_the_tombstone_counts_and_names_no_one(erasable, owner):
    study, vera, _ = erasable
    logged_in(owner).post(
        f"/research/s/{study.slug}/participants/{vera.public_id}/", {"action": "erase", "confirm": "yes"}
    )
    tomb = Erasure.objects.get(study=study)
    assert (tomb.answers, tomb.pages, tomb.how, tomb.erased_by) == (2, 3, "page", owner)
    linked = {f.related_model._meta.label for f in Erasure._meta.concrete_fields if f.is_relation}
    assert linked == {"annotation.Study", settings.AUTH_USER_MODEL}
    overview = logged_in(owner).get(f"/research/s/{study.slug}/").content.decode()
    assert "1 erasure so far" in overview


def test_only_the_owner_or_an_admin_erases_and_an_unknown_id_names_its_field(erasable, owner, superuser):
    study, vera, _ = erasable
    other = researcher_user("sam", password="pw")
    study.shared_with.add(other)
    refused = logged_in(other).post(
        f"/research/s/{study.slug}/participants/{vera.public_id}/", {"action": "erase", "confirm": "yes"}
    )
    assert refused.status_code == 403 and Response.objects.filter(participant=vera).count() == 2
    api = logged_in(other).post(
        f"/api/v1/studies/{study.slug}/participants/{vera.public_id}/erase/",
        {"confirm": True},
        content_type="application/json",
    )
    assert api.status_code == 403 and not Erasure.objects.exists()
    with pytest.raises(InputError) as unknown:
        find_enrollment(study, pseudonym="p0000000000000000")
    assert list(unknown.value.errors) == ["pseudonym"]
    found = logged_in(owner).get(
        f"/research/s/{study.slug}/participants/find/?by=platform_id&value=nobody", follow=True
    )
    assert "platform_id: &#x27;nobody&#x27;: no participant" in found.content.decode()
    with pytest.raises(CommandError, match="pseudonym"):
        call_command("erase", study.slug, "--pseudonym", "p0000000000000000")
    assert Response.objects.filter(participant=vera).count() == 2 and not Erasure.objects.exists()
    # by pseudonym, through the page's finder: it opens the confirmation
    name = participant_pseudonym(study, vera)
    found = logged_in(owner).get(f"/research/s/{study.slug}/participants/find/?by=pseudonym&value={name}")
    assert found["Location"] == f"/research/s/{study.slug}/participants/{vera.public_id}/?mark=erase#mark"
    admin = logged_in(superuser).post(
        f"/api/v1/studies/{study.slug}/participants/{vera.public_id}/erase/",
        {"confirm": True},
        content_type="application/json",
    )
    assert admin.status_code == 200 and admin.json()["answers"] == 2 and admin.json()["participant_removed"]


def test_the_command_erases_from_every_study_with_all_studies(make_claim_study):
    one = make_claim_study(slug="one")
    two = make_claim_study(slug="two")
    ada = crowd_participant(one, prolific_id("ada"), GOOD, pages=1)
    crowd_participant(two, prolific_id("ada"), GOOD, pages=2)
    out = io.StringIO()
    call_command("erase", "one", "--platform-id", ada.platform_worker_id, stdout=out)
    assert "Erased 1 answer(s)" in out.getvalue()
    assert Participant.objects.filter(pk=ada.pk).exists()  # study two still holds her (and her id)
    call_command("erase", "two", "--participant", ada.public_id, "--all-studies", stdout=out)
    assert not Participant.objects.filter(pk=ada.pk).exists()
    assert list(Erasure.objects.order_by("id").values_list("study__slug", "answers", "how")) == [
        ("one", 1, "command"),
        ("two", 2, "command"),
    ]


def test_exam_attempts_go_with_the_study_that_required_the_exam(client, example_study_file, owner):

    exam = load_study_file(example_study_file("simulation-exam"), owner=owner).study
    main = example_study_file("plausibility")
    main.update(qualification="demo-simulation-exam")
    study = load_study_file(main, owner=owner).study
    take_exam(
        client, study.slug, start(client, study.slug, f"?PROLIFIC_PID={prolific_id('exam-taker')}"), GOLD
    )
    taker = Participant.objects.get(platform_worker_id=prolific_id("exam-taker"))
    keys = keys_of(taker)
    assert (
        taker.exam_attempts.exists() and Response.objects.filter(study=exam, participant=taker).count() == 3
    )
    logged_in(owner).post(
        f"/research/s/{study.slug}/participants/{taker.public_id}/", {"action": "erase", "confirm": "yes"}
    )
    assert rows_pointing_at(keys) == []
    assert Erasure.objects.get(study=exam).exam_attempts == 1


def test_the_leave_page_deletes_my_answers_where_the_study_allows_it(client, make_claim_study):
    study = make_claim_study(slug="may-erase", participants_may_erase=True)
    start(client, study.slug, f"?PROLIFIC_PID={prolific_id('leaver')}")
    leaver = Participant.objects.get(platform_worker_id=prolific_id("leaver"))
    assert b'id="erase-my-answers"' in client.get(f"/s/{study.slug}/leave/").content
    crowd_participant(study, prolific_id("leaver"), GOOD, pages=1)  # the same person answers a page
    assert Response.objects.filter(participant=leaver).count() == 1
    page = client.post(f"/s/{study.slug}/leave/", {"erase": "yes"})
    assert b'id="answers-erased"' in page.content
    assert client.get(f"/s/{study.slug}/", follow=True).status_code == 200  # a new arrival, no error
    assert not Participant.objects.filter(pk=leaver.pk).exists()
    assert list(Erasure.objects.values_list("how", "answers", "erased_by")) == [("withdrawal", 1, None)]


def test_the_leave_page_keeps_the_answers_where_the_study_does_not_allow_it(client, make_claim_study):
    study = make_claim_study(slug="keeps")
    start(client, study.slug, f"?PROLIFIC_PID={prolific_id('stayer')}")
    assert b"erase-my-answers" not in client.get(f"/s/{study.slug}/leave/").content
    crowd_participant(study, prolific_id("stayer"), GOOD, pages=1)
    client.post(f"/s/{study.slug}/leave/", {"erase": "yes"})
    assert Response.objects.filter(study=study).count() == 1 and not Erasure.objects.exists()
    assert Enrollment.objects.get(study=study).status == "returned"


def back(study, participant, days: int) -> None:
    Enrollment.objects.filter(study=study, participant=participant).update(
        created_at=timezone.now() - timedelta(days=days)
    )


def test_retention_deletes_platform_ids_past_the_period_only(make_claim_study):
    study = make_claim_study(slug="kept-30-days", retention_days=30)
    elsewhere = make_claim_study(slug="no-retention")
    old = crowd_participant(study, prolific_id("old"), GOOD, pages=1)
    recent = crowd_participant(study, prolific_id("recent"), GOOD, pages=1)
    both = crowd_participant(study, prolific_id("both"), GOOD, pages=1)
    crowd_participant(elsewhere, prolific_id("both"), GOOD, pages=1)
    for person in (old, both):
        back(study, person, days=31)
    back(study, recent, days=29)
    result = apply_retention_task()
    assert result["platform_ids_deleted"] == 1
    ids = dict(Participant.objects.values_list("pk", "platform_worker_id"))
    assert (
        ids[old.pk] == "" and ids[recent.pk] == prolific_id("recent") and ids[both.pk] == prolific_id("both")
    )
    assert Enrollment.objects.get(study=study, participant=old).platform_session == {}
    assert Response.objects.filter(study=study).count() == 3  # answers kept


def test_retention_with_answers_erases_the_participant(make_claim_study):
    study = make_claim_study(slug="erase-after-30", retention_days=30, retention_erases_answers=True)
    old = crowd_participant(study, prolific_id("old"), GOOD, pages=2)
    recent = crowd_participant(study, prolific_id("recent"), GOOD, pages=1)
    back(study, old, days=31)
    assert apply_retention_task()["participants_erased"] == 1
    assert not Participant.objects.filter(pk=old.pk).exists()
    assert Response.objects.filter(study=study, participant=recent).count() == 1
    assert list(Erasure.objects.values_list("how", "answers", "erased_by")) == [("retention", 2, None)]


def test_the_admin_sites_delete_is_an_erasure(make_claim_study, superuser):
    study = make_claim_study(slug="admin-deletes", items=2, annotations_per_item=1, items_per_session=2)
    gone = crowd_participant(study, prolific_id("gone"), GOOD, pages=2)
    answer = logged_in(superuser).post(f"/admin/annotation/participant/{gone.pk}/delete/", {"post": "yes"})
    assert answer.status_code == 302
    assert not Participant.objects.filter(pk=gone.pk).exists()
    assert sorted(Item.objects.filter(study=study).values_list("slots_taken", flat=True)) == [0, 0]
    assert list(Erasure.objects.values_list("how", "answers", "erased_by")) == [("admin", 2, superuser.pk)]


def test_a_players_game_totals_lose_the_erased_studys_rounds_and_keep_the_others(owner):
    """The game keeps running totals per player (``PlayerStats``): an erasure from one game
    study rebuilds them from the rounds left (the kind's ``after_responses_moved``), it neither
    keeps the erased rounds nor drops the other study's."""
    from annotation.services.authoring.studies import load_study_file

    first = load_study_file(boundary_study_file(slug="game-one", items=3), owner=owner).study
    second = load_study_file(
        boundary_study_file(slug="game-two", items=2, category="stories"), owner=owner
    ).study
    player = Participant.objects.create(source=Participant.Source.ORGANIC)
    for study, rounds in ((first, 3), (second, 2)):
        give_consent(enroll(participant=player, study=study))
        for _ in range(rounds):
            assert play_via_services(player, study, lambda boundary, length: boundary) is not None
    assert PlayerStats.objects.get(participant=player, category="").played == 5

    erase(player, studies=[first], by=owner, how="page", recompute=False)

    totals = PlayerStats.objects.get(participant=player, category="")
    assert totals.played == 2 and totals.points_total == sum(
        r.points or 0 for r in Response.objects.filter(participant=player)
    )
    assert not PlayerStats.objects.filter(participant=player, category="news").exists()
    assert PlayerStats.objects.filter(participant=player, category="stories").exists()


def test_the_erasures_statements_do_not_grow_with_the_jobs_that_name_the_participant(make_claim_study, owner):
    """The jobs (and audit log) naming the erased are rewritten in one statement, not one each."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    study = make_claim_study(slug="many-jobs", items=4, annotations_per_item=2, items_per_session=1)
    few = crowd_participant(study, prolific_id("few"), GOOD, pages=1)
    many = crowd_participant(study, prolific_id("many"), GOOD, pages=1)
    for person, jobs in ((few, 1), (many, 6)):
        for n in range(jobs):
            Job.objects.create(kind="reports", study=study, parameters={"note": person.public_id, "n": n})

    statements = []
    for person in (few, many):
        with CaptureQueriesContext(connection) as queries:
            erase(person, studies=[study], by=owner, how="page", recompute=False)
        statements.append(len(queries))

    assert statements[0] == statements[1]
    assert sorted(Job.objects.filter(parameters__note=ERASED).values_list("parameters__n", flat=True)) == [
        0,
        0,
        1,
        2,
        3,
        4,
        5,
    ]
