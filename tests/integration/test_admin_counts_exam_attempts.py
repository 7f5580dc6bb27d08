"""Usability defect 24: the admin's study list showed "12 / 9 (133%)" for an exam, whose
every attempt answers every question. An exam is marked as one and counts its attempts."""

import pytest

from annotation.services.authoring.studies import load_study_file
from tests.helpers.exams import take_exam
from tests.helpers.flow import start

pytestmark = pytest.mark.django_db


def test_an_exam_shows_its_attempts_not_a_share_of_a_quota(client, django_user_model, example_study_file):
    load_study_file(example_study_file("simulation-exam"))
    main = example_study_file("plausibility")
    main.update(qualification="demo-simulation-exam")
    study = load_study_file(main).study
    html = start(client, study.slug)
    html = take_exam(client, study.slug, html, ["no", "no", "no"])  # a fail: 3 answers of 3 wanted
    html = client.post(f"/s/{study.slug}/exam/retry/", follow=True).content.decode()
    assert "attempt 2 of 2" in html
    take_exam(client, study.slug, html, ["no", "no", "no"])  # 6 answers of the 3 items

    admin = django_user_model.objects.create_superuser("root", "", "pw-for-tests-only")
    client.force_login(admin)
    listing = client.get("/admin/annotation/study/").content.decode()
    assert "exam: 2 attempts" in listing
    assert "6 / 3" not in listing and "200%" not in listing
    assert "0 / " in listing  # the guarded study keeps its responses / wanted
