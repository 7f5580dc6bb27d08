"""Edit requests and the items built from edited passages, against the shared payload contracts."""

from __future__ import annotations

import json

import pytest

from annotation.errors import InputError
from annotation.job_parameters import EDIT_METHODS
from tests.lm_fixtures import RECORDS
from workers.editing import METHODS
from workers.editing.items import (
    Case,
    Passage,
    claim_items,
    human_passages,
    likert_items,
    planned_ids,
    ranking_items,
)
from workers.editing.requests import parse_edit_request, read_edit_requests

SYSTEMS = {"none": "tiny-gpt2", "ike": "IKE", "rome": "ROME"}


def case_with(record: dict, methods=("none", "ike", "rome")) -> Case:
    request = parse_edit_request(record)
    passages = []
    for method in methods:
        passages.append(
            Passage(
                SYSTEMS[method], method, "main", f"{request.subject} is fine. It is {method}.", {"seed": 1}
            )
        )
        if request.related_prompt:
            passages.append(
                Passage(SYSTEMS[method], method, "related", f"{request.related_entity} too.", {"seed": 2})
            )
    return Case(request, "tiny-gpt2", tuple(passages + human_passages(request)))


def test_a_counterfact_record_becomes_a_request():
    request = parse_edit_request({**RECORDS[0], "case_id": 17, "pararel_idx": 3})
    assert request.case_id == "17"
    assert request.filled_prompt == "Lake Tolvik is located in"
    assert request.filled_prompt[: request.subject_end] == "Lake Tolvik"
    assert (request.new_fact, request.old_fact) == (
        "Lake Tolvik is located in Rome.",
        "Lake Tolvik is located in Paris.",
    )
    assert request.main_passage_prompt == "Lake Tolvik stands in the city of"
    assert (request.related_entity, request.related_prompt) == ("Port Ilse", "Port Ilse is located in")


def test_bad_requests_are_refused_naming_the_field(tmp_path):
    broken = json.loads(json.dumps(RECORDS[1]))
    broken["requested_rewrite"]["prompt"] = "is located in"
    with pytest.raises(InputError) as exc:
        parse_edit_request(broken)
    assert list(exc.value.errors) == ["requested_rewrite.prompt"]
    path = tmp_path / "requests.jsonl"
    path.write_text(
        "\n".join([json.dumps(RECORDS[0]), "{not json", json.dumps(broken), json.dumps(RECORDS[0])])
    )
    with pytest.raises(InputError) as exc:
        read_edit_requests(path)
    case_0, case_1 = RECORDS[0]["case_id"], RECORDS[1]["case_id"]
    assert set(exc.value.errors) == {
        "line 2",
        f"line 3: requested_rewrite.prompt (case_id {str(case_1)!r})",
        f"line 4: case_id (case_id {str(case_0)!r})",
    }


def test_likert_items_follow_the_contract():
    items = likert_items(case_with(RECORDS[0]))
    assert [i["provenance"]["system"] for i in items] == ["tiny-gpt2", "IKE", "ROME", "human"]
    payload = items[2]["payload"]
    assert set(payload) == {"new_fact", "old_facts", "main_passage", "related_passage", "related_entity"}
    assert payload["new_fact"] == "Lake Tolvik is located in Rome."
    assert payload["old_facts"] == ["Lake Tolvik is located in Paris.", "Port Ilse is located in Paris."]
    assert payload["main_passage"].endswith("It is rome.") and payload["related_entity"] == "Port Ilse"
    assert {i["provenance"]["source_id"] for i in items} == {"tolvik"}
    assert items[3]["payload"]["main_passage"].startswith("Lake Tolvik is located in Rome.")


def test_likert_without_a_related_entity_leaves_the_related_fields_out():
    [item] = likert_items(case_with(RECORDS[2], methods=("rome",)))
    assert set(item["payload"]) == {"new_fact", "old_facts", "main_passage"}


def test_a_ranking_item_holds_every_systems_main_passage():
    [item] = ranking_items(case_with(RECORDS[0]))
    assert item["payload"]["fact"] == "Lake Tolvik is located in Rome."
    assert [p["system"] for p in item["payload"]["passages"]] == ["tiny-gpt2", "IKE", "ROME", "human"]
    assert all(set(p) == {"system", "text"} for p in item["payload"]["passages"])
    assert (
        item["provenance"]["source_id"] == "tolvik"
        and item["provenance"]["passages"]["ROME"]["method"] == "rome"
    )


def test_claim_items_pair_each_passage_with_new_old_and_ground_truth_facts():
    items = claim_items(case_with(RECORDS[0], methods=("rome",)))
    rome_main = [i for i in items if i["external_id"].startswith("tolvik:tiny-gpt2:rome:main:")]
    assert [i["payload"]["claim_type"] for i in rome_main] == ["new_fact", "old_fact", "ground_truth"]
    assert [i["payload"]["claim"] for i in rome_main] == [
        "Lake Tolvik is located in Rome.",
        "Lake Tolvik is located in Paris.",
        "Port Ilse is located in Paris.",
    ]
    assert rome_main[0]["payload"]["sentences"] == ["Lake Tolvik is fine.", "It is rome."]
    assert len(items) == 12  # (rome + human) × (main + related) × 3 claims
    assert {i["provenance"]["passage"] for i in items} == {"main", "related"}


@pytest.mark.parametrize("kind", ["likert", "ranking", "claim"])
def test_planned_ids_are_the_ids_the_builders_make(kind):
    case = case_with(RECORDS[0])
    built = {"likert": likert_items, "ranking": ranking_items, "claim": claim_items}[kind](case)
    plan = planned_ids(kind, case.request, ["none", "ike", "rome"], "tiny-gpt2")
    human = planned_ids(kind, case.request, ["human"], "tiny-gpt2")["human"] if kind != "ranking" else set()
    assert set().union(*plan.values(), human) == {item["external_id"] for item in built}


def test_the_site_and_the_workers_agree_on_the_methods():
    assert list(METHODS) == EDIT_METHODS


def test_the_documented_examples_are_valid_inputs():
    from tests.conftest import EXAMPLES
    from workers.generation.study_passages import read_corpus

    requests = read_edit_requests(EXAMPLES / "edit-requests.jsonl")
    assert [r.case_id for r in requests] == ["orla-bridge", "teodor-lunn"]
    assert requests[0].human_main and requests[0].related_entity == "Tallow Market"
    assert {d.category for d in read_corpus(EXAMPLES / "continuations-corpus.jsonl")} == {"news", "stories"}
