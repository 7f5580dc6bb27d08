"""Review finding 16 (adversarial review): the items upload API added gold-less items and
attention checks to an exam, which the study-file loader refuses. Both go through
``validation.validate_item`` now."""

from __future__ import annotations

import json

import pytest

from annotation.models import Study

pytestmark = pytest.mark.django_db


def test_items_upload_to_an_exam_follows_the_exam_rules(client_for, users, example_study_file):
    data = example_study_file("simulation-exam")
    assert client_for("owner").post("/api/v1/studies/", data, format="json").status_code == 201
    study = Study.objects.get(slug=data["slug"])
    template = data["items"][0]
    lines = [
        {**template, "external_id": "no-gold", "gold": None},
        {**template, "external_id": "check", "attention_check": True},
    ]
    body = "\n".join(json.dumps(line) for line in lines)
    answer = client_for("owner").post(
        f"/api/v1/studies/{study.slug}/items/", body, content_type="application/x-ndjson"
    )
    assert answer.status_code == 400
    assert answer.json() == {
        "line 1: gold (external_id 'no-gold')": ["Every exam item needs its gold answer."],
        "line 2: attention_check (external_id 'check')": ["An exam has no attention checks."],
    }
    assert study.items.count() == 3
