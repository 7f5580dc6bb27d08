"""Usability defect 16, its last part: the *Leave* link disappeared on the exam's result
pages. It is there after a pass and after a failed attempt, and leaving from there works.
(The exam-specific final text with the score and the training feedback are shown by
tests/integration/test_exams.py and tests/integration/test_training_exam.py.)"""

import pytest

from annotation.models import Enrollment
from annotation.services.authoring.studies import load_study_file
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.exams import GOLD, take_exam
from tests.helpers.flow import start

pytestmark = pytest.mark.django_db
LEAVE = 'id="exam-leave">Leave</a>'


@pytest.fixture
def study_behind_an_exam(example_study_file):
    load_study_file(example_study_file("simulation-exam"))
    main = example_study_file("plausibility")
    main.update(qualification="demo-simulation-exam")
    return load_study_file(main).study


def test_a_failed_attempt_offers_leave_and_leaving_returns_the_study(client, study_behind_an_exam):
    html = take_exam(
        client,
        study_behind_an_exam.slug,
        start(client, study_behind_an_exam.slug, f"?PROLIFIC_PID={prolific_id('quitter')}"),
        ["no"] * 3,
    )
    assert "Not quite yet" in html and LEAVE in html
    assert client.get(f"/s/{study_behind_an_exam.slug}/leave/").status_code == 200
    client.post(f"/s/{study_behind_an_exam.slug}/leave/")
    assert Enrollment.objects.get(study=study_behind_an_exam).status == "returned"


def test_a_passed_exam_offers_leave_too(client, study_behind_an_exam):
    html = take_exam(client, study_behind_an_exam.slug, start(client, study_behind_an_exam.slug), GOLD)
    assert "You passed" in html and LEAVE in html
