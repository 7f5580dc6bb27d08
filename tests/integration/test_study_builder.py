"""The study builder (issue 26) through its pages on PostgreSQL: a questionnaire made on the
form with its items from a CSV whose columns are mapped on the page, every error listed at
once with nothing saved, a draft edited without uploading its items again, a live study's
questions kept, a study's file exported and uploaded again as the same study, a template's
study file, and the preview of a draft's first page."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Item, Study
from annotation.research.views.builder_form import QUESTION_FIELDS, form_values
from annotation.services.authoring.builder import as_new_study, builder_templates, template_named
from annotation.services.authoring.study_files import study_file_of
from annotation.services.authoring.validation import CONFIG_KEPT
from tests.helpers.uploads import row_counts, upload_page

pytestmark = pytest.mark.django_db

CSV = (
    "key,prompt,left,left_model,right,right_model,note\n"
    'k1,Say hello.,Hello there. Nice day.,alphamodel,"Hi, friend.",betamodel,ignore me\n'
    "k2,Say bye.,Goodbye now.,alphamodel,Bye.,betamodel,\n"
)
MAPPING = {
    "col_name": ["key", "prompt", "left", "left_model", "right", "right_model", "note"],
    "col_role": ["id", "context", "passage_text", "passage_system", "passage_text", "passage_system", ""],
    "col_passage": ["", "", "a", "a", "b", "b", ""],
}
QUESTIONS = [
    {"id": "better", "type": "pick", "pick": "pairwise", "tie": "yes", "text": "Which reply is better?"},
    {"id": "fluency", "type": "scale", "points": "5", "labels": "Broken\nFlawless", "text": "How fluent?"},
    {"id": "why", "type": "text", "required": "no", "max_length": "300", "text": "Why?"},
]


def question_fields(questions: list[dict]) -> dict[str, list[str]]:
    """The question blocks as the page posts them: one list per field, in the page's order."""
    return {f"q_{name}": [str(q.get(name, "")) for q in questions] for name in QUESTION_FIELDS}


def form(slug: str = "built", questions: list[dict] = QUESTIONS, **fields) -> dict:
    return {
        "template": "questionnaire-blank",
        "slug": slug,
        "title": "Which reply is better?",
        "instructions": "Read both replies, then answer.",
        "annotations_per_item": "2",
        "items_per_session": "2",
        **question_fields(questions),
        **fields,
    }


def errors_of(page) -> dict[str, str]:
    """The error table's rows: where → problem."""
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", page.content.decode())
    return {html.unescape(where): html.unescape(problem) for where, problem in rows}


def kept_file(client, text: str = CSV, name: str = "r.csv", **fields) -> dict[str, str]:
    """Upload an items file and read its columns, as the page's first round does: the
    fields by which the next round finds the file the server kept."""
    first = client.post(
        "/research/builder/",
        {**form(**fields), "action": "columns", "items_file": SimpleUploadedFile(name, text.encode())},
    )
    assert first.status_code == 200 and 'id="kept-file"' in first.content.decode()
    token = re.search(r'name="items_token" value="([0-9a-f]+)"', first.content.decode())
    assert token, first.content.decode()
    return {"items_name": name, "items_token": token[1]}


def build(client, **fields):
    """Save a draft as a researcher would: upload the CSV and read its columns, map them, save."""
    kept = {**kept_file(client, **fields), **MAPPING}
    return client.post("/research/builder/", {**form(**fields), **kept, "action": "save"})


def test_a_questionnaire_made_on_the_form_with_its_csv_columns_mapped(client, researcher):
    start = client.get("/research/builder/")
    assert "questionnaire-blank" in start.content.decode() and "likert" in start.content.decode()
    blank = client.get("/research/builder/?template=questionnaire-blank")
    assert blank.status_code == 200 and 'name="q_id"' in blank.content.decode()

    saved = build(client)
    assert saved.status_code == 302 and saved["Location"] == "/research/s/built/"
    study = Study.objects.get(slug="built")
    assert (study.kind, study.status, study.owner, study.annotations_per_item) == (
        "questionnaire",
        "draft",
        researcher,
        2,
    )
    assert [q["id"] for q in study.config["questions"]] == ["better", "fluency", "why"]
    assert study.config["questions"][0]["tie"] is True
    assert study.config["questions"][1]["labels"] == ["Broken", "Flawless"]
    assert study.config["questions"][2] == {
        "id": "why", "type": "text", "text": "Why?", "required": False, "min_length": 0, "max_length": 300,
    }  # fmt: skip
    first = Item.objects.get(study=study, external_id="k1")
    assert first.payload == {
        "context": "Say hello.",
        "passages": [
            {"id": "a", "text": "Hello there. Nice day.", "system": "alphamodel"},
            {"id": "b", "text": "Hi, friend.", "system": "betamodel"},
        ],
    }
    assert study.items.count() == 2


def test_every_error_is_listed_at_once_and_nothing_is_saved(client, researcher):
    before = row_counts()
    bad_questions = [
        {**QUESTIONS[0]},
        {"id": "fluency", "type": "scale", "points": "12", "text": "How fluent?"},
        {"id": "topic", "type": "choice", "options": "only one", "text": "Topic?"},
    ]
    bad_csv = CSV + "k3,Say hi.,,alphamodel,Hi.,betamodel,\n"  # passage a has a system but no text
    page = client.post(
        "/research/builder/",
        {
            **form(slug="bad slug!", questions=bad_questions, items_per_session="0", title=""),
            **kept_file(client, bad_csv),
            **MAPPING,
            "action": "save",
        },
    )
    assert page.status_code == 400
    errors = errors_of(page)
    assert "slug" in errors and "items_per_session" in errors and "title" in errors
    assert errors["question 2 (fluency): points"] == "a whole number from 2 to 11."
    assert errors["question 3 (topic): options"].startswith("a list of 2 to")
    # U7: the items file's own errors in the same pass, read under the template's questions.
    assert any(where.startswith("items file, line 4: passage.a.text") for where in errors), errors
    assert row_counts() == before
    assert 'id="kept-file"' in page.content.decode()  # the file is kept for the next try
    assert 'id="builder-form" class="builder" action="" novalidate' in page.content.decode()

    # With the questions right, the items file's errors are still named by line and column.
    page = client.post(
        "/research/builder/",
        {**form(slug="bad slug!"), **kept_file(client, bad_csv), **MAPPING, "action": "save"},
    )
    errors = errors_of(page)
    assert "slug" in errors
    assert any(where.startswith("items file, line 4: passage.a.text") for where in errors)
    assert row_counts() == before


def test_a_draft_is_edited_without_its_items_again_and_a_live_studys_questions_are_kept(client, researcher):
    build(client)
    study = Study.objects.get(slug="built")
    items_before = list(study.items.order_by("id").values_list("external_id", "payload"))
    edit = client.get("/research/s/built/edit/")
    assert edit.status_code == 200 and edit.content.decode().count('name="q_id"') == 4  # 3 and the template's

    reordered = [QUESTIONS[1], QUESTIONS[0]]  # "why" removed, the scale first
    Study.objects.filter(slug="built").update(completion_code="OLD-CODE")
    edit = {**form(questions=reordered), "title": "Better replies", "completion_code": ""}
    changed = client.post("/research/s/built/edit/", edit)
    assert changed.status_code == 302
    study.refresh_from_db()
    assert (study.title, study.completion_code) == ("Better replies", "")
    assert [q["id"] for q in study.config["questions"]] == ["fluency", "better"]
    assert list(study.items.order_by("id").values_list("external_id", "payload")) == items_before

    client.post("/research/s/built/status/", {"status": "live"})
    page = client.get("/research/s/built/edit/")
    assert 'id="questions-frozen"' in page.content.decode() and 'name="q_id"' not in page.content.decode()
    refused = client.post("/research/s/built/edit/", {**form(questions=QUESTIONS), "title": "Other"})
    assert refused.status_code == 400 and errors_of(refused)["config"] == CONFIG_KEPT
    study.refresh_from_db()
    assert study.title == "Better replies" and len(study.config["questions"]) == 2
    settings_only = {k: v for k, v in form().items() if not k.startswith("q_")}
    kept = client.post(
        "/research/s/built/edit/", {**settings_only, "title": "Live title", "instructions": "New words."}
    )
    assert kept.status_code == 302
    study.refresh_from_db()
    assert (study.title, study.instructions, len(study.config["questions"])) == (
        "Live title",
        "New words.",
        2,
    )


def test_the_exported_study_file_uploads_as_the_same_study(client, researcher):
    build(client)
    download = client.get("/research/s/built/study-file/")
    assert download["Content-Disposition"] == 'attachment; filename="built.json"'
    data = json.loads(download.content)
    assert upload_page(client, {**data, "slug": "built-copy"}).status_code == 302
    original, copy = (study_file_of(Study.objects.get(slug=s)) for s in ("built", "built-copy"))
    assert {**copy, "slug": "built"} == original == {**data}


def test_a_fixed_kind_template_gives_the_study_file_the_upload_takes(client, researcher, example_study_file):
    page = client.get("/research/builder/?template=likert")
    assert page.status_code == 200 and 'name="config_json"' in page.content.decode()
    example = example_study_file("likert")
    fields = {
        "template": "likert",
        "slug": "my-likert",
        "title": example["title"],
        "instructions": example.get("instructions", ""),
        "config_json": json.dumps(example.get("config", {})),
        "extras_json": json.dumps({k: example[k] for k in ("examples", "faq") if k in example}),
        "use_template_items": "yes",
    }
    preview = client.post("/research/builder/preview/", fields)
    assert preview.status_code == 200 and 'id="preview-page"' in preview.content.decode()
    download = client.post("/research/builder/", {**fields, "action": "download"})
    assert download.status_code == 200
    data = json.loads(download.content)
    assert data["kind"] == "likert" and data["items"] == example["items"]
    assert client.post("/research/builder/", {**fields, "action": "save"}).status_code == 302
    assert upload_page(client, {**data, "slug": "uploaded-likert"}).status_code == 302
    built, uploaded = (study_file_of(Study.objects.get(slug=s)) for s in ("my-likert", "uploaded-likert"))
    assert {**uploaded, "slug": "my-likert"} == built


def test_the_preview_shows_the_first_item_as_participants_see_it_and_saves_nothing(client, researcher):
    before = row_counts()
    page = client.post(
        "/research/builder/preview/",
        {**form(), "items_file": SimpleUploadedFile("r.csv", CSV.encode()), **MAPPING},
    )
    text = page.content.decode()
    assert page.status_code == 200 and 'id="preview-page"' in text
    assert "Which reply is better?" in text and "Hello there. Nice day." in text and "Say hello." in text
    assert not re.search(r"alphamodel|betamodel", text)  # the systems stay hidden
    assert row_counts() == before
    broken = client.post("/research/builder/preview/", {**form(questions=[{**QUESTIONS[1], "points": "1"}])})
    assert broken.status_code == 400 and "config.questions[0].points" in broken.content.decode()


def test_only_researchers_reach_the_builder(client, django_user_model):
    assert client.get("/research/builder/").status_code == 302  # to the login page
    client.force_login(django_user_model.objects.create_user("pat", password="pw"))
    assert client.get("/research/builder/").status_code in (403, 404)


def test_jsonl_items_a_show_if_and_a_passage_column_without_an_id(client, researcher):
    lines = [
        {
            "external_id": f"j{n}",
            "payload": {"passages": [{"id": "a", "text": f"A {n}."}, {"id": "b", "text": "B."}]},
        }
        for n in range(2)
    ]
    jsonl = "\n".join(json.dumps(line) for line in lines)
    questions = [
        QUESTIONS[1],
        {"id": "issue", "type": "choice", "options": "yes\nno", "text": "A problem?"},
        {"id": "which", "type": "multi", "options": "grammar\nfacts", "text": "Which?", "show_if": "issue"},
        {"id": "low", "type": "text", "text": "Why so low?", "show_if": "fluency", "show_if_values": "1\n2"},
    ]
    questions[2]["show_if_values"] = "yes"
    page = client.post(
        "/research/builder/",
        {
            **form(slug="jsonl", questions=questions),
            "items_file": SimpleUploadedFile("i.jsonl", jsonl.encode()),
        },
    )
    assert page.status_code == 302
    config = Study.objects.get(slug="jsonl").config["questions"]
    assert config[2]["show_if"] == {"question": "issue", "in": ["yes"]}
    assert config[3]["show_if"] == {"question": "fluency", "in": [1, 2]}

    unmapped = {**MAPPING, "col_passage": ["", "", "", "a", "b", "b", ""]}  # reply_1's text has no id
    page = client.post("/research/builder/", {**form(slug="nomap"), **kept_file(client), **unmapped})
    assert page.status_code == 400
    assert errors_of(page)["items file, column left"].startswith("Give the passage an id")
    assert 'id="kept-file"' in page.content.decode() and not Study.objects.filter(slug="nomap").exists()


def test_a_template_leaves_its_codes_and_a_study_needs_items(client, researcher):
    page = client.get("/research/builder/?template=questionnaire-pairwise").content.decode()
    assert "DEMO-QPAIR-7H2" not in page and 'value="better"' in page
    fields = {**form(slug="no-items"), "template": "questionnaire-pairwise", "use_template_items": "no"}
    refused = client.post("/research/builder/", fields)
    assert refused.status_code == 400
    assert errors_of(refused)["items file"] == "Upload the study's items: a CSV or JSON Lines file."
    kept = client.post("/research/builder/", {**fields, "use_template_items": "yes"})
    assert kept.status_code == 302 and Study.objects.get(slug="no-items").items.count() == 4


def test_another_researchers_study_is_not_reached(client, researcher, django_user_model):
    build(client)
    from tests.factories import researcher_user

    client.force_login(researcher_user("otto", password="pw"))
    assert client.get("/research/s/built/edit/").status_code == 404
    assert client.post("/research/s/built/edit/", form(title="Mine")).status_code == 404
    assert client.get("/research/s/built/study-file/").status_code == 404
    assert Study.objects.get(slug="built").title == "Which reply is better?"


def test_a_saved_drafts_preview_uses_its_items_and_the_form_as_it_stands(client, researcher):
    build(client)
    changed = [{**QUESTIONS[1], "text": "Is it smooth to read?"}]
    page = client.post("/research/builder/preview/", {**form(questions=changed), "study": "built"})
    text = page.content.decode()
    assert page.status_code == 200 and "Is it smooth to read?" in text and "Hello there. Nice day." in text
    assert "How fluent?" not in text
    assert [q["text"] for q in Study.objects.get(slug="built").config["questions"]][1] == "How fluent?"


def test_a_templates_items_are_checked_against_the_edited_questions(client, researcher):
    fields = {**form(slug="tpl"), "template": "questionnaire-pairwise", "use_template_items": "yes"}
    fields["q_pick"] = ["best_worst", "", ""]  # the examples hold two replies; best-worst needs three
    fields["q_tie"] = ["no", "no", "no"]
    page = client.post("/research/builder/", {**fields, "action": "download"})
    assert page.status_code == 400
    assert any(where.startswith("items[0].payload.passages") for where in errors_of(page))
    assert not Study.objects.filter(slug="tpl").exists()


@pytest.mark.parametrize("template", [t.name for t in builder_templates() if t.data.get("items")])
def test_every_template_renders_previews_and_saves_as_it_comes(client, researcher, template):
    """Each template's form, posted back as it comes (a slug added), previews its first item
    and saves a draft with the template's items."""
    page = client.get(f"/research/builder/?template={template}")
    assert page.status_code == 200
    values = form_values(as_new_study(template_named(template)))
    fields = {
        "template": template,
        "slug": f"from-{template}",
        "use_template_items": "yes",
        **{name: values[name] for name in ("title", "description", "instructions", "consent")},
        **{name: value for name, value in values["settings"].items()},
        **({"extras_json": values["extras_json"]} if values["extras_json"] else {}),
    }
    if values["questions"]:
        fields.update({f"q_{k}": [str(q[k]) for q in values["questions"]] for k in values["questions"][0]})
    else:
        fields["config_json"] = values["config_json"]
    preview = client.post("/research/builder/preview/", fields)
    assert preview.status_code == 200
    assert (
        'id="preview-page"' in preview.content.decode() or 'id="preview-own-page"' in preview.content.decode()
    )
    saved = client.post("/research/builder/", {**fields, "action": "save"})
    assert saved.status_code == 302, errors_of(saved)
    study = Study.objects.get(slug=f"from-{template}")
    assert study.items.count() == len(template_named(template).data["items"])


def big_csv(size: int) -> str:
    """The CSV with rows of long replies, to about ``size`` bytes (every cell under the CSV
    reader's 128 KiB field limit)."""
    header, rows = CSV.splitlines()[0], []
    reply = "A fairly long reply sentence. " * 1500  # 45,000 characters (a passage takes 50,000)
    while sum(map(len, rows)) < size:
        n = len(rows)
        rows.append(f'k{n},Say {n}.,"{reply}",alphamodel,"{reply}",betamodel,')
    return "\n".join([header, *rows]) + "\n"


def test_an_items_file_above_the_form_text_limit_is_read_then_saved(client, researcher, settings):
    """The file is sent once and kept on the server: a 3.5 MB CSV (over the 2.5 MB of form
    text Django reads, under the upload limit) is read, mapped and saved."""
    text = big_csv(3_500_000)
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE < len(text.encode()) < settings.API_MAX_UPLOAD_BYTES
    page = client.post("/research/builder/", {**form(slug="big"), **kept_file(client, text), **MAPPING})
    assert page.status_code == 302, errors_of(page)
    assert Study.objects.get(slug="big").items.count() == text.count("\nk")


def test_a_file_over_the_upload_limit_is_named_and_the_form_kept(client, researcher, settings):
    settings.API_MAX_UPLOAD_BYTES = 1_000_000
    before = row_counts()
    big = SimpleUploadedFile("r.csv", big_csv(1_200_000).encode())
    page = client.post("/research/builder/", {**form(slug="too-big", title="Kept title"), "items_file": big})
    assert page.status_code == 400
    assert errors_of(page)["items file"] == "The file is larger than 1,000,000 bytes."
    assert 'value="Kept title"' in page.content.decode() and 'value="too-big"' in page.content.decode()
    assert row_counts() == before


def test_a_kept_file_is_only_its_uploaders(client, researcher, django_user_model):
    kept = kept_file(client)
    from tests.factories import researcher_user

    client.force_login(researcher_user("someone-else"))
    page = client.post("/research/builder/", {**form(slug="theirs"), **kept, **MAPPING})
    assert page.status_code == 400
    assert errors_of(page)["items file"] == "The file uploaded earlier is no longer kept; choose it again."
    assert not Study.objects.filter(slug="theirs").exists()


@pytest.mark.parametrize("path", ["/research/builder/", "/s/any/consent/", "/accounts/login/"])
def test_form_text_over_djangos_limit_is_a_clear_page_not_a_bare_400(client, researcher, settings, path):
    """A form Django will not read (over DATA_UPLOAD_MAX_MEMORY_SIZE of text): 413 with a
    page saying what happened and what to do, wherever it is posted."""
    before = row_counts()
    page = client.post(path, {**form(), "instructions": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})
    assert page.status_code == 413
    assert "The form sent more than 2.5" in page.content.decode() and 'id="too-big"' in page.content.decode()
    assert row_counts() == before


@pytest.mark.parametrize(
    "raw, message",
    [
        ('{"n": ' + "9" * 5000 + "}", "more digits than we read"),
        ('{"n": NaN}', "NaN and Infinity"),
        ("[" * 100 + "]" * 100, "Nested deeper than"),
    ],
)
def test_json_the_reader_refuses_in_a_builder_field_is_named_not_a_500(client, researcher, raw, message):
    before = row_counts()
    page = client.post("/research/builder/", {**form(slug="json"), "extras_json": raw, "action": "save"})
    assert page.status_code == 400
    assert message in errors_of(page)["examples and FAQ"]
    assert row_counts() == before
