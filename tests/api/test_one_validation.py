"""One validation per kind: the study-file loader, the API and the Django admin refuse the
same bad study, config and item with the kind's own message, and write nothing; every row
of a long bad file is reported, named by its place and its id."""

from __future__ import annotations

import json

import pytest

from annotation.errors import InputError
from annotation.models import AttentionCheck, Exam, Item, Response, Study
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.helpers.admin import admin_form_data, form_errors

pytestmark = pytest.mark.django_db

BAD_PAYLOAD = {"claim": "", "sentences": ["One sentence."]}


@pytest.fixture
def superuser_client(client, superuser):
    client.force_login(superuser)
    return client


def loader_message(mutate) -> tuple[str, list[str]]:
    data = claim_study_file(slug="loader-probe", items=2)
    mutate(data)
    with pytest.raises(InputError) as caught:
        load_study_file(data)
    [(path, messages)] = caught.value.errors.items()
    return path, messages


def ranking_study(example_study_file, slug: str = "ranking", **fields) -> Study:
    data = example_study_file("ranking")
    data.update(slug=slug, **fields)
    return load_study_file(data).study


# --- the admin ---------------------------------------------------------------------------


def test_admin_refuses_a_bad_payload_with_the_kinds_message(superuser_client, superuser, make_claim_study):
    item = make_claim_study(items=1).items.get()
    before = item.payload
    url = f"/admin/annotation/item/{item.pk}/change/"
    answer = superuser_client.post(url, admin_form_data(Item, item, superuser, payload=BAD_PAYLOAD))
    _, messages = loader_message(lambda d: d["items"][1].update(payload=BAD_PAYLOAD))
    assert f"claim: {messages[0]}" in form_errors(answer)
    item.refresh_from_db()
    assert item.payload == before


def test_admin_refuses_a_gold_less_attention_check(superuser_client, superuser, make_claim_study):
    study = make_claim_study(items=1)
    data = {
        "study": study.pk,
        "external_id": "attn-new",
        "payload": json.dumps({"claim": "Pick neutral.", "sentences": ["Nothing here."]}),
        "gold": "null",
        "provenance": "{}",
    }
    answer = superuser_client.post("/admin/annotation/attentioncheck/add/", data)
    assert "An attention check needs its expected answer in &#x27;gold&#x27;." in form_errors(answer)
    assert not Item.objects.filter(external_id="attn-new").exists()
    item = study.items.get()
    plain = admin_form_data(AttentionCheck, item, superuser, gold=None, is_attention_check="on")
    plain["gold"] = "null"
    answer = superuser_client.post(f"/admin/annotation/item/{item.pk}/change/", plain)
    assert "An attention check needs its expected answer" in form_errors(answer)
    item.refresh_from_db()
    assert not item.is_attention_check and item.gold is not None


def test_admin_refuses_bad_gold_with_the_kinds_message(superuser_client, superuser, make_claim_study):
    item = make_claim_study(items=1).items.get()
    data = admin_form_data(Item, item, superuser, gold={"label": "maybe"})
    answer = superuser_client.post(f"/admin/annotation/item/{item.pk}/change/", data)
    _, messages = loader_message(lambda d: d["items"][0].update(gold={"label": "maybe"}))
    assert f"label: {messages[0]}".replace('"', "&quot;") in form_errors(answer)
    item.refresh_from_db()
    assert item.gold == {"label": "supports", "evidence": [0]}


def test_admin_refuses_a_config_the_kind_refuses(superuser_client, superuser, example_study_file):
    study = ranking_study(example_study_file)
    url = f"/admin/annotation/study/{study.pk}/change/"
    answer = superuser_client.post(url, admin_form_data(Study, study, superuser, config={"nonsense": 1}))
    assert "nonsense: Unknown field." in form_errors(answer)
    answer = superuser_client.post(url, admin_form_data(Study, study, superuser, config={"show": 5}))
    assert "The study shows 5 passages per page; this item has 3." in form_errors(answer)
    study.refresh_from_db()
    assert study.config["show"] == 3


def test_admin_refuses_a_kind_change_once_the_study_has_items(superuser_client, superuser, make_claim_study):
    study = make_claim_study(items=2)
    url = f"/admin/annotation/study/{study.pk}/change/"
    answer = superuser_client.post(url, admin_form_data(Study, study, superuser, kind="likert"))
    assert "The study has 2 items of kind &#x27;claim&#x27;; its kind cannot change." in form_errors(answer)
    assert Study.objects.get(pk=study.pk).kind == "claim"


def test_admin_still_saves_a_good_change(superuser_client, superuser, example_study_file):
    study = ranking_study(example_study_file)
    url = f"/admin/annotation/study/{study.pk}/change/"
    answer = superuser_client.post(url, admin_form_data(Study, study, superuser, title="Renamed"))
    assert answer.status_code == 302
    assert Study.objects.get(pk=study.pk).title == "Renamed"


def test_admin_applies_the_exam_rules_to_exam_items(superuser_client, superuser, example_study_file):
    exam = load_study_file(example_study_file("simulation-exam")).study
    item = exam.items.first()
    data = admin_form_data(Item, item, superuser)
    data["gold"] = "null"
    answer = superuser_client.post(f"/admin/annotation/item/{item.pk}/change/", data)
    assert "Every exam item needs its gold answer." in form_errors(answer)
    assert Item.objects.get(pk=item.pk).gold is not None


def test_admin_refuses_an_exam_that_breaks_the_exam_rules(superuser_client, superuser, make_claim_study):
    study = make_claim_study(slug="not-an-exam", items=2, attention=1, status="draft")
    data = {"study": study.pk, "pass_mark": 5, "attempts_allowed": 2}
    errors = form_errors(superuser_client.post("/admin/annotation/exam/add/", data))
    assert "Higher than the number of exam items (3)." in errors
    assert "item &#x27;attn0&#x27;: attention_check: An exam has no attention checks." in errors
    assert not Exam.objects.exists()


def test_an_exam_cannot_be_made_public_by_patch_or_admin(
    superuser_client, superuser, client_for, users, example_study_file
):
    exam = load_study_file(example_study_file("simulation-exam"), owner=users["owner"]).study
    answer = client_for("owner").patch(f"/api/v1/studies/{exam.slug}/", {"public": True}, format="json")
    assert answer.status_code == 400 and "public" in answer.json()
    page = superuser_client.post(
        f"/admin/annotation/study/{exam.pk}/change/", admin_form_data(Study, exam, superuser, public="on")
    )
    assert "it cannot be public" in form_errors(page)
    assert not Study.objects.get(pk=exam.pk).public


# --- the API -----------------------------------------------------------------------------


def test_patch_of_kind_is_refused_once_the_study_has_items(client_for, api_ranking):
    answer = client_for("owner").patch("/api/v1/studies/api-ranking/", {"kind": "claim"}, format="json")
    assert answer.status_code == 400
    assert answer.json()["kind"] == ["The study has 4 items of kind 'ranking'; its kind cannot change."]
    assert Study.objects.get(pk=api_ranking.pk).kind == "ranking"


def test_patch_reads_and_changes_every_setting_a_study_file_has(client_for, api_ranking):
    owner = client_for("owner")
    answer = owner.patch(
        "/api/v1/studies/api-ranking/",
        {"expected_seconds_per_page": 90, "min_seconds_per_page": 5},
        format="json",
    )
    assert answer.status_code == 200
    assert answer.json()["expected_seconds_per_page"] == 90 and answer.json()["min_seconds_per_page"] == 5


def test_loader_api_and_admin_give_the_same_message_for_the_same_payload(
    superuser_client, superuser, client_for, owned_study
):
    path, loader = loader_message(lambda d: d["items"][1].update(payload=BAD_PAYLOAD))
    assert path == "items[1].payload.claim (external_id 'c1')"
    line = json.dumps({"external_id": "bad", "payload": BAD_PAYLOAD})
    upload = client_for("owner").post(
        "/api/v1/studies/owned/items/", line, content_type="application/x-ndjson"
    )
    assert upload.json() == {"line 1: payload.claim (external_id 'bad')": loader}
    item = owned_study.items.first()
    page = superuser_client.post(
        f"/admin/annotation/item/{item.pk}/change/",
        admin_form_data(Item, item, superuser, payload=BAD_PAYLOAD),
    )
    assert f"claim: {loader[0]}" in form_errors(page)


# --- the loader --------------------------------------------------------------------------


def test_reloading_a_file_cannot_change_the_kind_of_a_study_with_items(example_study_file):
    ranking_study(example_study_file, slug="fixed-kind")
    data = claim_study_file(slug="fixed-kind", items=2)
    with pytest.raises(InputError) as caught:
        load_study_file(data)
    assert caught.value.errors == {
        "kind": ["The study has 4 items of kind 'ranking'; its kind cannot change."]
    }
    assert Study.objects.get(slug="fixed-kind").kind == "ranking"


def test_reloading_a_file_checks_the_new_config_against_the_items_it_keeps(example_study_file):
    ranking_study(example_study_file, slug="keeps")
    data = example_study_file("ranking")
    data.update(slug="keeps", config={"show": 4})
    data["items"] = data["items"][:1]
    data["items"][0]["payload"]["passages"].append({"system": "extra", "text": "A fourth passage."})
    with pytest.raises(InputError) as caught:
        load_study_file(data)
    assert len(caught.value.errors["config"]) == 3
    assert Study.objects.get(slug="keeps").config["show"] == 3


# --- every row of a long file ------------------------------------------------------------


def test_a_study_file_with_many_bad_items_reports_every_one(client_for, users):
    data = claim_study_file(slug="many-bad", items=70)
    for item in data["items"]:
        item["payload"]["claim"] = ""
    answer = client_for("owner").post("/api/v1/studies/", data, format="json")
    assert answer.status_code == 400
    expected = {f"items[{i}].payload.claim (external_id 'c{i}')" for i in range(70)}
    assert set(answer.json()) == expected
    assert not Study.objects.filter(slug="many-bad").exists()


def test_an_items_upload_with_many_bad_lines_reports_every_one(client_for, owned_study):
    lines = [json.dumps({"external_id": f"n{i}", "payload": BAD_PAYLOAD}) for i in range(60)]
    answer = client_for("owner").post(
        "/api/v1/studies/owned/items/", "\n".join(lines), content_type="application/x-ndjson"
    )
    assert answer.status_code == 400
    assert set(answer.json()) == {f"line {i + 1}: payload.claim (external_id 'n{i}')" for i in range(60)}
    assert owned_study.items.count() == 4


def test_an_import_with_many_bad_lines_reports_every_one(make_claim_study):
    study = make_claim_study(items=2)
    lines = [
        json.dumps({"participant": f"p{i}", "item": "c0", "answer": {"label": "sideways"}}) for i in range(60)
    ]
    with pytest.raises(InputError) as caught:
        import_responses(study, lines)
    assert set(caught.value.errors) == {f"line {i + 1}: answer.label (item 'c0')" for i in range(60)}
    assert not Response.objects.exists()
