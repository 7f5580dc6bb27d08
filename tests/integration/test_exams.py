"""Qualification exams through the HTTP layer: pass → the study; fail → another attempt;
fail every attempt → the screen-out code; answers and outcomes stored."""

import pytest
from django.test import Client

from annotation.models import Assignment, Enrollment, ExamAttempt, Response
from annotation.services.authoring.studies import load_study_file
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.exams import GOLD, exam_action, take_exam
from tests.helpers.flow import start

pytestmark = pytest.mark.django_db


@pytest.fixture
def studies(example_study_file):
    """The sample exam (3 simulation items, 2 to pass, 2 attempts) required by a plausibility
    study: an exam may be of another kind than the study it guards."""
    load_study_file(example_study_file("simulation-exam"))
    main = example_study_file("plausibility")
    main.update(qualification="demo-simulation-exam", screenout_code="PLAUS-OUT")
    return load_study_file(main).study


def test_passing_leads_to_the_study_and_stores_the_attempt(client, studies):
    html = start(client, studies.slug)
    assert "Qualification quiz" in html and "attempt 1 of 2" in html
    html = take_exam(client, studies.slug, html, ["yes", "not_helpful", "no"])
    assert "You passed" in html and "2 of 3 correct" in html
    page = client.get(f"/s/{studies.slug}/task/").content.decode()
    assert "Page 1 of 3" in page and "Explanation 1" in page
    attempt = ExamAttempt.objects.get()
    assert (attempt.number, attempt.status, attempt.correct_count, attempt.question_count) == (
        1,
        "passed",
        2,
        3,
    )
    answers = Response.objects.filter(study__slug="demo-simulation-exam").order_by("item_id")
    assert [r.answer["choice"] for r in answers] == ["yes", "not_helpful", "no"]
    assert [r.correct for r in answers] == [True, True, False]
    assert set(answers.values_list("assignment__attempt", flat=True)) == {1}
    assert Enrollment.objects.get(study__slug="demo-simulation-exam").status == "completed"


def test_a_failed_attempt_offers_another_then_passing_continues(client, studies):
    html = take_exam(client, studies.slug, start(client, studies.slug), ["no", "no", "no"])
    assert "Not quite yet" in html and "0 of 3 correct; 2 are needed" in html
    assert client.get(f"/s/{studies.slug}/task/")["Location"] == f"/s/{studies.slug}/exam/"
    assert client.get(f"/s/{studies.slug}/exam/").content.decode().count("Try again") == 1
    html = client.post(f"/s/{studies.slug}/exam/retry/", follow=True).content.decode()
    client.post(f"/s/{studies.slug}/exam/retry/")  # a double click starts nothing more
    assert "attempt 2 of 2" in html
    html = take_exam(client, studies.slug, html, GOLD)
    assert "You passed" in html and "3 of 3 correct" in html
    assert list(ExamAttempt.objects.values_list("number", "status")) == [(1, "failed"), (2, "passed")]
    per_attempt = Assignment.objects.filter(study__slug="demo-simulation-exam").values_list(
        "attempt", flat=True
    )
    assert sorted(per_attempt) == [1, 1, 1, 2, 2, 2]
    assert "Page 1 of 3" in client.get(f"/s/{studies.slug}/task/", follow=True).content.decode()


def test_failing_every_attempt_ends_with_the_screenout_code(client, studies):
    html = take_exam(
        client,
        studies.slug,
        start(client, studies.slug, f"?PROLIFIC_PID={prolific_id('exam-fail')}"),
        ["no"] * 3,
    )
    html = client.post(f"/s/{studies.slug}/exam/retry/", follow=True).content.decode()
    html = take_exam(client, studies.slug, html, ["no", "no", "yes"])
    assert "PLAUS-OUT" in html and "DEMO-PLAUS-3W7" not in html
    # The last page speaks of the quiz and its score, not of attention checks (issue 12).
    assert 'id="exam-failed-final"' in html and 'id="exam-final-score">1 of 3<' in html
    assert "checks built into this study" not in html
    enrollment = Enrollment.objects.get(study=studies)
    assert enrollment.status == "screened_out"
    assert not enrollment.flagged  # an exam is not an attention check
    assert not Assignment.objects.filter(study=studies).exists()
    client.post(f"/s/{studies.slug}/exam/retry/")
    assert ExamAttempt.objects.count() == 2
    assert (
        client.get(f"/s/{studies.slug}/task/", follow=True).redirect_chain[-1][0]
        == f"/s/{studies.slug}/done/"
    )
    assert client.get(f"/s/{studies.slug}/exam/", follow=True).status_code == 200
    assert ExamAttempt.objects.count() == 2


def test_a_bad_exam_answer_is_named_and_stores_nothing(client, studies):
    html = start(client, studies.slug)
    response = client.post(exam_action(html), {"choice": "response_1"})
    assert response.status_code == 400 and b"Choose one answer" in response.content
    assert b"Question 1 of 3" in response.content
    assert Response.objects.count() == 0
    again = client.get(f"/s/{studies.slug}/exam/").content.decode()
    assert exam_action(again) == exam_action(html)  # the same question, not a new one


def test_a_pass_counts_for_every_study_requiring_the_exam(client, studies, example_study_file):
    other = example_study_file("likert")
    other.update(qualification="demo-simulation-exam")
    other = load_study_file(other).study
    take_exam(client, studies.slug, start(client, studies.slug), GOLD)
    html = start(client, other.slug)
    assert "Page 1 of 3" in html and "Qualification quiz" not in html


def test_the_exam_is_not_a_study_of_its_own_and_is_announced(client, studies):
    assert client.get("/s/demo-simulation-exam/").status_code == 404
    consent = client.get(f"/s/{studies.slug}/", follow=True).content.decode()
    assert "qualification quiz: 3 questions, of which you need 2 right" in consent


def test_someone_elses_exam_question_is_404(client, studies):
    action = exam_action(start(client, studies.slug))
    intruder = Client()
    start(intruder, studies.slug)
    assert intruder.post(action, {"choice": "yes"}).status_code == 404
    assert Response.objects.count() == 0


def test_admin_shows_exams_and_read_only_attempts(client, studies, django_user_model):
    take_exam(client, studies.slug, start(client, studies.slug), GOLD)
    admin = Client()
    admin.force_login(django_user_model.objects.create_superuser("root", "", "pw-for-tests-only"))
    assert b"demo-simulation-exam" in admin.get("/admin/annotation/exam/").content
    assert b"passed" in admin.get("/admin/annotation/examattempt/").content
    assert admin.get("/admin/annotation/examattempt/add/").status_code == 403


def test_researchers_see_each_participants_exam_outcome(client, studies, django_user_model):
    from annotation.services.analysis.quality import study_quality

    passer, failer, idle = Client(), Client(), Client()
    take_exam(passer, studies.slug, start(passer, studies.slug), GOLD)
    take_exam(failer, studies.slug, start(failer, studies.slug), ["no", "no", "no"])
    take_exam(failer, studies.slug, client_retry(failer, studies.slug), ["no", "no", "no"])
    start(idle, studies.slug)
    enrollments = list(Enrollment.objects.filter(study=studies))
    outcomes = {
        q.enrollment.participant_id: (q.qualification.outcome, q.qualification.detail)
        for q in study_quality(studies, enrollments).values()
    }
    assert sorted(outcome for outcome, _ in outcomes.values()) == ["failed", "passed", "pending"]
    details = " / ".join(detail for _, detail in outcomes.values())
    assert "passed the exam on attempt 1 (3 of 3 correct)" in details
    assert "failed 2 attempt(s); best 0 of 3 correct" in details
    assert "attempt 1 in progress" in details  # entering the study starts the first attempt


def client_retry(client, slug: str) -> str:
    client.post(f"/s/{slug}/exam/retry/")
    return client.get(f"/s/{slug}/exam/", follow=True).content.decode()


def test_each_attempt_asks_the_items_in_its_own_stable_order(client, example_study_file):
    """N13: every attempt asked the items in the file's order, so the first attempt's training
    feedback was an answer sheet for the second. Each attempt now has its own order, seeded by
    (participant, attempt): a reload asks the same question, a retry another order."""
    exam = example_study_file("simulation-exam")
    template = exam["items"][0]
    exam["items"] = [{**template, "external_id": f"q{n}"} for n in range(8)]
    exam["exam"].update(pass_mark=8, attempts=2)
    load_study_file(exam)
    main = example_study_file("plausibility")
    main.update(qualification="demo-simulation-exam")
    study = load_study_file(main).study

    def one_attempt(html: str) -> list[str]:
        asked = []
        for _ in range(8):
            action = exam_action(html)
            reloaded = client.get(f"/s/{study.slug}/exam/").content.decode()
            assert exam_action(reloaded) == action  # a reload asks the same question
            asked.append(
                Assignment.objects.get(pk=int(action.rstrip("/").rpartition("/")[2])).item.external_id
            )
            client.post(action, {"choice": "no"})
            html = client.get(f"/s/{study.slug}/exam/", follow=True).content.decode()
        return asked

    first = one_attempt(start(client, study.slug))
    second = one_attempt(client.post(f"/s/{study.slug}/exam/retry/", follow=True).content.decode())
    assert sorted(first) == sorted(second) == [f"q{n}" for n in range(8)]
    assert first != second
    assert ExamAttempt.objects.filter(number=2).exists()


def test_the_owners_test_run_says_so_on_the_exam_pages_too(client, studies, researcher):
    """U13: the 'test run' banner on the qualification quiz and its result, as on the task."""
    from annotation.models import Study

    Study.objects.filter(pk=studies.pk).update(owner=researcher)
    html = start(client, studies.slug)
    assert "Qualification quiz" in html and 'id="test-run-banner"' in html
    html = take_exam(client, studies.slug, html, ["yes", "not_helpful", "no"])
    assert "You passed" in html and 'id="test-run-banner"' in html
