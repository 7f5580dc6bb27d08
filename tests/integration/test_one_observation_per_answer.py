"""A questionnaire scale answer is one value: every reader of an adaptive questionnaire
study counts each answer once — the reports (``computereports``), the pilot's "answers that
count" (``manage.py plan``), the stopping rule's interval, the adaptive priority of each
item and the export downloaded over HTTP. (Each scale answer used to be stored as an
ordinal and an interval observation, and plan and the stopping rule read both: a
360-answer study had "720 answers that count".)"""

from __future__ import annotations

import csv
import io
import json
import random
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from annotation.models import Item, Job, Participant
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.authoring.studies import load_study_file
from stats.adaptive import scale_uncertainty
from tests.helpers.reports import computereports_json, report_row

pytestmark = pytest.mark.django_db

SLUG = "one-value"
ANNOTATORS = ("ann", "bob", "cat")
ITEMS_PER_SYSTEM = 6
ANSWERS = 2 * ITEMS_PER_SYSTEM * len(ANNOTATORS)  # 36
NOT_MET = {"question": "quality", "systems": ["A", "B"], "width": 0.01}  # keeps the study live


def study_file() -> dict:
    """A live adaptive questionnaire study: one 7-point scale, one passage per item, half
    of the items by system A, half by B, with a stopping rule on the scale."""
    items = [
        {
            "external_id": f"{system}{index}",
            "provenance": {"system": system},
            "payload": {"passages": [{"id": "only", "text": f"Reply {index}.", "system": system}]},
        }
        for system in "AB"
        for index in range(ITEMS_PER_SYSTEM)
    ]
    return {
        "slug": SLUG,
        "title": "One value per answer",
        "kind": "questionnaire",
        "status": "live",
        "annotations_per_item": len(ANNOTATORS),
        "config": {
            "questions": [{"id": "quality", "type": "scale", "points": 7, "text": "How good is it?"}],
            "assignment": "adaptive",
            "adaptive": {"min_answers": 2, "stop": NOT_MET},
        },
        "items": items,
    }


@pytest.fixture
def rated_study(researcher):
    """The study with every item answered by every annotator; answers[item] = its ratings."""
    study = load_study_file(study_file(), owner=researcher).study
    rng = random.Random(3)
    ratings = {
        item.external_id: [rng.randint(1, 5) + (item.external_id[0] == "A") for _ in ANNOTATORS]
        for item in Item.objects.filter(study=study)
    }
    lines = [
        json.dumps({"participant": who, "item": item, "answer": {"quality": values[k]}})
        for item, values in ratings.items()
        for k, who in enumerate(ANNOTATORS)
    ]
    assert import_responses(study, lines, source=Participant.Source.LAB).created == ANSWERS
    return study, ratings


def test_every_reader_counts_each_scale_answer_once(
    rated_study, client, settings, tmp_path, django_capture_on_commit_callbacks
):
    study, ratings = rated_study
    rows = computereports_json(study, "--population", "passed")
    assert report_row(rows, "questionnaire.mean", question="quality")["n"] == ANSWERS
    assert report_row(rows, "questionnaire.mean", question="quality", system="A")["n"] == ANSWERS // 2
    stopping = report_row(rows, "adaptive.stopping_interval", question="quality", system="A", over="B")
    assert stopping["n"] == ANSWERS
    assert (stopping["details"]["n_first"], stopping["details"]["n_second"]) == (ANSWERS // 2, ANSWERS // 2)

    out = StringIO()
    design = ["--items", "5,10", "--answers", "1,3", "--simulations", "200"]
    call_command(
        "plan", SLUG, "--question", "quality", "--compare", "A", "B", "--difference", "1", *design, stdout=out
    )
    assert f"; {ANSWERS} answers that count;" in out.getvalue(), out.getvalue()

    # The adaptive priority: each item's t-interval over its own answers, each counted once.
    every = np.array([value for values in ratings.values() for value in values], dtype=float)
    span = float(every.max() - every.min())
    priorities = dict(Item.objects.filter(study=study).values_list("external_id", "priority"))
    expected = {item: scale_uncertainty(np.array(given, float), span) for item, given in ratings.items()}
    assert priorities == pytest.approx(expected)

    settings.EXPORT_DIR = tmp_path
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/research/s/{SLUG}/exports/", {"format": "csv"})
    job = Job.objects.get(kind="export")
    download = client.get(f"/research/s/{SLUG}/exports/{job.pk}/download/")
    exported = list(csv.DictReader(io.StringIO(b"".join(download.streaming_content).decode())))
    assert len(exported) == ANSWERS
    assert sorted(int(row["answer.quality"]) for row in exported) == sorted(every.astype(int).tolist())
