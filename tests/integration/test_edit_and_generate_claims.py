"""edit_and_generate's claim study on the tiny model: the items with their provenance, and a
rerun that adds nothing. Both tests read the study one run writes, once for the module
(tests/helpers/module_data.py): the run (two ROME edits and every method's passages) is
most of either test. A module of its own, so that no test expecting an empty database
(tests/integration/test_edit_and_generate.py) runs while the rows are there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import override_settings

from annotation.models import Item, Job, Study
from tests.helpers.module_data import rows_for_the_module
from tests.integration.test_edit_and_generate import edit_and_generate
from tests.lm_fixtures import RECORDS, worker_setting_values

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def claims_run(
    django_db_setup, django_db_blocker, tmp_path_factory, tiny_registry, stats_corpus, stats_dir
) -> Iterator[tuple[Path, str]]:
    """The requests file (the first two records) and what ``edit_and_generate --kind claim``
    wrote on stderr, its study and job kept for the module, under a GPU worker's settings."""
    requests_file = tmp_path_factory.mktemp("requests") / "requests.jsonl"
    requests_file.write_text("\n".join(json.dumps(record) for record in RECORDS[:2]))
    with (
        override_settings(**worker_setting_values(tiny_registry, stats_corpus, stats_dir)),
        rows_for_the_module(django_db_blocker),
    ):
        yield requests_file, edit_and_generate(requests_file, kind="claim")


def test_claim_items_for_every_method_passage_and_fact(claims_run):
    _, err = claims_run
    study = Study.objects.get(slug="leme-claims")
    assert study.kind == "claim" and study.status == "draft"
    tolvik = {i.external_id: i for i in Item.objects.filter(study=study, provenance__source_id="tolvik")}
    # (3 methods + human) × (main + related) × (new fact, old fact, one ground-truth fact)
    assert len(tolvik) == 4 * 2 * 3
    rome = tolvik["tolvik:tiny-gpt2:rome:main:new_fact"]
    assert (
        rome.payload["claim"] == "Lake Tolvik is located in Rome."
        and rome.payload["claim_type"] == "new_fact"
    )
    assert " ".join(rome.payload["sentences"]).startswith("Lake Tolvik stands in the city of")
    provenance = rome.provenance
    assert (provenance["system"], provenance["method"], provenance["model"]) == ("ROME", "rome", "tiny-gpt2")
    assert provenance["decoding"] == {
        "do_sample": True,
        "top_p": 0.95,
        "top_k": 50,
        "temperature": 0.9,
        "max_new_tokens": 24,
    }
    assert provenance["edit"]["metrics"]["efficacy"] is True
    assert provenance["edit"]["hparams"] == {"file": "tiny-gpt2.json", "version": 4}
    unedited = tolvik["tolvik:tiny-gpt2:none:main:new_fact"].provenance
    assert unedited["system"] == "tiny-gpt2" and unedited["seed"] == provenance["seed"]  # paired streams
    assert unedited["edit"]["metrics"]["efficacy"] is False
    assert (
        tolvik["tolvik:tiny-gpt2:ike:related:ground_truth0"].payload["claim"]
        == "Port Ilse is located in Paris."
    )
    human = tolvik["tolvik:human:main:old_fact"]
    assert (
        human.provenance["system"] == "human"
        and human.payload["sentences"][0] == "Lake Tolvik is located in Rome."
    )
    job = Job.objects.get(kind="edit_and_generate")
    assert job.status == "done" and job.progress_done == job.progress_total == 6
    assert job.result["metrics"]["tolvik"]["rome"]["efficacy"] is True
    assert "edited passages for leme-claims" in err


def test_running_again_edits_nothing_and_adds_nothing(claims_run):
    requests_file, _ = claims_run
    count = Item.objects.count()
    edit_and_generate(requests_file)  # the study exists now: its kind is used
    assert Item.objects.count() == count
    second = Job.objects.order_by("pk").last()
    assert second.result["edits"] == 0 and second.result["added"] == 0
