"""The human subset as a study setting (issue 38): set in a study file, changed by PATCH and
on the builder's page, each through the one checker (the field named when it is bad) and
the one writer that draws the items anew and refuses a change once people have answered."""

from __future__ import annotations

import pytest

from annotation.errors import InputError
from annotation.models import Item, Study
from annotation.services.authoring.human_subset import uniform_draw
from annotation.services.authoring.studies import load_study_file_for
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from tests.conftest import claim_study_file

pytestmark = pytest.mark.django_db


def drawn(study: Study) -> dict[str, tuple[bool, float | None]]:
    rows = Item.objects.filter(study=study).values_list("external_id", "for_humans", "human_inclusion")
    return {external_id: (for_humans, inclusion) for external_id, for_humans, inclusion in rows}


def expected(ids, fraction: float, seed: int) -> dict[str, tuple[bool, float]]:
    return {i: (uniform_draw(seed, i) < fraction, fraction) for i in ids}


def test_the_subset_is_a_setting_of_the_file_the_api_and_the_builder(client, researcher, enrolled):
    data = claim_study_file(
        slug="subset", items=12, status="draft", human_subset={"fraction": 0.5, "seed": 3}
    )
    ids = [item["external_id"] for item in data["items"]]
    created = client.post("/api/v1/studies/", data, content_type="application/json")
    assert created.status_code == 201 and created.json()["human_subset"] == {"fraction": 0.5, "seed": 3}
    study = Study.objects.get(slug="subset")
    assert drawn(study) == expected(ids, 0.5, 3)

    bad = client.patch(
        "/api/v1/studies/subset/", {"human_subset": {"fraction": 2}}, content_type="application/json"
    )
    assert bad.status_code == 400 and "human_subset.fraction" in bad.json()
    assert drawn(study) == expected(ids, 0.5, 3)

    patched = client.patch(
        "/api/v1/studies/subset/",
        {"human_subset": {"fraction": 0.25, "seed": 9}},
        content_type="application/json",
    )
    assert patched.status_code == 200 and drawn(study) == expected(ids, 0.25, 9)

    edit = client.get("/research/s/subset/edit/")
    assert 'name="human_subset"' in edit.content.decode()
    fields = {"title": "Claims", "human_subset": '{"fraction": 0.75, "seed": 1}', "config_json": "{}"}
    assert client.post("/research/s/subset/edit/", fields).status_code == 302
    assert drawn(study) == expected(ids, 0.75, 1)

    # once people have answered, a new design is refused by every way in, naming the field
    client.post("/research/s/subset/status/", {"status": "live"})
    person = enrolled(study)
    assignment = assign_next_item(participant=person, study=study)
    submit_response(assignment=assignment, answer={"label": "neutral", "evidence": []})
    late = client.patch("/api/v1/studies/subset/", {"human_subset": {}}, content_type="application/json")
    assert late.status_code == 400 and "human_subset" in late.json()
    page = client.post("/research/s/subset/edit/", {**fields, "title": "Renamed", "human_subset": ""})
    assert page.status_code == 400 and "human_subset" in page.content.decode()
    with pytest.raises(InputError) as refile:  # the study file loaded again, as the upload page does
        load_study_file_for(
            researcher, {**data, "status": "live", "human_subset": {"fraction": 0.1}}, update_own=True
        )
    assert "human_subset" in refile.value.errors
    study.refresh_from_db()
    assert study.title == "Claims" and drawn(study) == expected(ids, 0.75, 1)
    # the design in force is not a change: the same file's settings pass
    same = client.patch(
        "/api/v1/studies/subset/",
        {"human_subset": {"fraction": 0.75, "seed": 1}},
        content_type="application/json",
    )
    assert same.status_code == 200
