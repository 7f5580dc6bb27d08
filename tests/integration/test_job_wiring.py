"""What ``JobTask`` does for every task body: a kind that works on a study is never run
without one, and a model rater's run, whatever the model, ends in one summary shape."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from annotation.models import Item, Job, ModelOutput, Participant, Study
from annotation.services.analysis.model_answers import ModelAnswer
from annotation.services.jobs import JOB_KINDS
from roft_site.celery import app
from tests.factories import ItemFactory, StudyFactory
from tests.rater_cases import CASES
from workers.raters.run import answer_as_model

pytestmark = pytest.mark.django_db

STUDY_KINDS = sorted(name for name, kind in JOB_KINDS.items() if kind.needs_study)


@pytest.mark.parametrize("name", STUDY_KINDS)
def test_a_job_of_a_kind_that_needs_a_study_fails_clearly_without_one(name):
    job = Job.objects.create(kind=name, parameters={})

    app.tasks[JOB_KINDS[name].task].apply(args=[job.pk])

    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error == f"This {name} job works on a study, and it has none (never given, or deleted since)."
    assert job.progress_done == job.progress_total == 0  # the body never started


class EchoRater:
    """A model that gives a person's answer to each item (no model loaded), and may not
    answer the first item: what ``answer_as_model`` does with any rater."""

    definition = {"kind": "llm", "model": "echo", "version": "1"}

    def __init__(self, answers: dict[str, tuple[dict, dict]]):
        self.answers = answers
        self.batches: list[int] = []

    def leaves_out(self, study: Study) -> set[str]:
        return {"claim-0"}

    def answer(self, study: Study, items: Sequence[Item]) -> list[ModelAnswer]:
        self.batches.append(len(items))
        return [ModelAnswer(item, "echo", *self.answers[item.external_id]) for item in items]


def test_answer_as_model_stores_batches_leaves_out_what_the_rater_may_not_answer_and_resumes():
    case = CASES["claim"]
    study = StudyFactory(kind="claim", slug="echo-claims", config=case.config)
    for n, payload in enumerate(case.payloads):
        ItemFactory(study=study, external_id=f"claim-{n}", payload=payload)
    rater = EchoRater({f"claim-{n}": human for n, human in enumerate(case.human)})
    reports: list[tuple[int, int | None, str]] = []

    result = answer_as_model(
        study,
        rater,
        progress=lambda done, total=None, message="": reports.append((done, total, message)),
        batch=1,
    )

    participant = Participant.objects.get(source="model", definition=rater.definition)
    assert result.summary() == {
        "participant": participant.platform_worker_id,
        "items": 2,
        "left_out": 1,
        "created": 2,
        "skipped": 0,
        "unparseable": 0,
        "invalid": 0,
        "failed": 0,
        "errors": {},
    }
    assert rater.batches == [1, 1] and [done for done, _, _ in reports] == [0, 1, 2]
    assert ModelOutput.objects.filter(participant=participant).count() == 2
    again = answer_as_model(study, rater, batch=1)
    assert (again.items, again.left_out, again.created) == (0, 1, 0) and rater.batches == [1, 1]
