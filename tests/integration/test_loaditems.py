"""loaditems: a CSV or JSON Lines file of items added to an existing study, every row checked
by the study's kind first, every error named by line and field (a CSV's by column), nothing
written when any row is bad, and no id the study already has (or the file repeats)."""

from __future__ import annotations

import csv
import io
import json
import re
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from annotation.errors import InputError
from annotation.models import Item
from annotation.services.authoring.item_files import add_items_from_file
from annotation.services.authoring.studies import load_study_file
from tests.helpers.questionnaire import questionnaire_file

pytestmark = pytest.mark.django_db


def csv_text(rows: list[list[str]], *, line_end: str = "\n") -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator=line_end).writerows(rows)
    return out.getvalue()


def run(tmp_path, slug: str, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    out = StringIO()
    call_command("loaditems", slug, str(path), stdout=out)
    return out.getvalue()


def errors_of(study, content: str, file_format: str = "csv") -> dict[str, list[str]]:
    with pytest.raises(InputError) as exc:
        add_items_from_file(study, content.encode(), file_format=file_format)
    return exc.value.errors


@pytest.fixture
def quest():
    return load_study_file(questionnaire_file(items=1)).study  # live, item q0


QUEST_HEADER = ["id", "context", "passage.a.text", "passage.a.system", "passage.b.text", "passage.b.system"]


def test_questionnaire_csv_spells_passages_and_context_in_columns(tmp_path, quest):
    rows = [
        QUEST_HEADER,
        ["n1", "Say *hello*, politely.", "Hello, friend.\nHow are you?", "alpha", "Hi.", "beta"],
        ["n2", "", "Good day.", "", "Hey!", "beta"],
    ]
    assert run(tmp_path, quest.slug, "items.csv", csv_text(rows)) == "Added 2 items to quest.\n"
    first = Item.objects.get(study=quest, external_id="n1").payload
    assert first == {
        "context": "Say *hello*, politely.",
        "passages": [
            {"id": "a", "text": "Hello, friend.\nHow are you?", "system": "alpha"},
            {"id": "b", "text": "Hi.", "system": "beta"},
        ],
    }
    second = Item.objects.get(study=quest, external_id="n2").payload
    assert "context" not in second  # an empty cell: none
    assert [(p["id"], p["text"], p.get("system", "")) for p in second["passages"]] == [
        ("a", "Good day.", ""),
        ("b", "Hey!", "beta"),
    ]


def test_excel_csv_with_a_byte_order_mark_and_crlf_lines(tmp_path, quest):
    rows = [QUEST_HEADER, ["x1", "Prompt", "One. Two.", "alpha", "Three.", "beta"]]
    content = "\ufeff".encode() + csv_text(rows, line_end="\r\n").encode()
    assert "Added 1 items" in run(tmp_path, quest.slug, "FROM-EXCEL.CSV", content)
    item = Item.objects.get(study=quest, external_id="x1")
    assert [p["text"] for p in item.payload["passages"]] == ["One. Two.", "Three."]


def test_questionnaire_jsonl_lines_are_study_file_items(tmp_path, quest):
    items = [
        {
            "external_id": f"j{n}",
            "payload": {"passages": [{"id": "p1", "text": "Yes."}, {"id": "p2", "text": "No."}]},
            "provenance": {"source_id": f"case-{n}"},
        }
        for n in range(2)
    ]
    content = "\n".join(json.dumps(item) for item in items) + "\n\n"
    assert "Added 2 items to quest." in run(tmp_path, quest.slug, "items.jsonl", content)
    assert Item.objects.get(study=quest, external_id="j1").provenance == {"source_id": "case-1"}


CLAIM_PAYLOAD = {"claim": "The bridge is in Rome.", "passage": "The bridge is in Rome. It is old."}


def test_claim_csv_holds_payload_gold_and_provenance_as_json(tmp_path, make_claim_study):
    study = make_claim_study(items=2)
    rows = [
        ["external_id", "payload", "attention_check", "gold", "provenance", "explanation"],
        ["k1", json.dumps(CLAIM_PAYLOAD), "", "", json.dumps({"system": "ROME"}), ""],
        ["k2", json.dumps(CLAIM_PAYLOAD), "TRUE", json.dumps({"label": "supports"}), "", "See 1."],
    ]
    assert "Added 2 items to claims." in run(tmp_path, study.slug, "items.csv", csv_text(rows))
    plain, check = Item.objects.get(external_id="k1"), Item.objects.get(external_id="k2")
    assert plain.payload["sentences"] == ["The bridge is in Rome.", "It is old."]  # split by the kind
    assert (plain.provenance, plain.is_attention_check, plain.gold) == ({"system": "ROME"}, False, None)
    assert (check.is_attention_check, check.gold["label"], check.explanation) == (True, "supports", "See 1.")


def test_claim_jsonl(tmp_path, make_claim_study):
    study = make_claim_study(items=1)
    line = json.dumps({"external_id": "k1", "payload": CLAIM_PAYLOAD})
    assert "Added 1 items" in run(tmp_path, study.slug, "items.jsonl", line)
    assert Item.objects.filter(study=study).count() == 2


def test_every_error_at_once_and_nothing_written(tmp_path, make_claim_study):
    study = make_claim_study(items=2)
    rows = [
        ["id", "payload", "gold", "colour"],
        ["ok", json.dumps(CLAIM_PAYLOAD), "", "red"],
        ["bad-claim", json.dumps({**CLAIM_PAYLOAD, "claim": ""}), "", ""],
        ["bad-gold", json.dumps(CLAIM_PAYLOAD), "{label: supports}", ""],
        ["", json.dumps(CLAIM_PAYLOAD), "", "", "stray"],
        ["ok2", json.dumps(CLAIM_PAYLOAD), "", ""],
    ]
    errors = errors_of(study, csv_text(rows))
    assert set(errors) == {
        "line 1: colour",
        "line 3: payload.claim (external_id 'bad-claim')",
        "line 4: gold (external_id 'bad-gold')",
        "line 5: column 5",
        "line 5: external_id",
    }
    assert "Unknown column" in errors["line 1: colour"][0]
    assert errors["line 4: gold (external_id 'bad-gold')"][0].startswith("Not valid JSON")
    assert Item.objects.filter(study=study).count() == 2
    with pytest.raises(CommandError) as exc:  # the command prints them all, and writes nothing
        run(tmp_path, study.slug, "items.csv", csv_text(rows))
    assert "nothing was written" in str(exc.value) and "line 3: payload.claim" in str(exc.value)
    assert Item.objects.filter(study=study).count() == 2


def test_ids_already_in_the_study_or_repeated_in_the_file_are_errors(make_claim_study):
    study = make_claim_study(items=2)  # c0, c1
    lines = [{"external_id": eid, "payload": CLAIM_PAYLOAD} for eid in ("new", "c1", "new", " c0 ")]
    errors = errors_of(study, "\n".join(json.dumps(line) for line in lines), "jsonl")
    assert errors == {
        "line 2: external_id (external_id 'c1')": ["The study already has an item with this id."],
        "line 3: external_id (external_id 'new')": ["Repeats the external_id of line 1."],
        "line 4: external_id (external_id ' c0 ')": ["The study already has an item with this id."],
    }
    assert not Item.objects.filter(external_id="new").exists()


def test_questionnaire_errors_are_named_by_their_column(quest):
    rows = [
        QUEST_HEADER,
        ["n1", "", "One.", "x" * 101, "Two.", ""],  # a system of at most 100 characters
        ["n2", "", "", "alpha", "Two.", ""],  # a system without its text
        ["n3", "", "Only one.", "", "", ""],  # the pairwise question needs exactly two
    ]
    errors = errors_of(quest, csv_text(rows))
    assert set(errors) == {
        "line 2: passage.a.system (external_id 'n1')",
        "line 3: passage.a.text (external_id 'n2')",
        "line 4: passage columns (external_id 'n3')",
    }


def test_a_header_that_spells_the_payload_twice_or_lacks_ids(quest):
    both = errors_of(quest, csv_text([["id", "payload", "passage.a.text"], ["n1", "{}", "One."]]))
    assert "line 1: payload" in both
    assert errors_of(quest, csv_text([["passage.a.text"], ["One."]])) == {
        "line 1: external_id": ["The file needs an external_id (or id) column."]
    }
    assert "line 1: passage.b.system" in errors_of(quest, csv_text([["id", "passage.b.system"], ["n1", "s"]]))


def test_records_are_numbered_by_the_line_they_start_on(make_claim_study):
    study = make_claim_study(items=1)
    rows = [
        ["id", "payload"],
        ["ok", json.dumps(CLAIM_PAYLOAD, indent=1)],  # a cell over several lines
        ["bad", json.dumps({"claim": "No passage."})],
    ]
    text = csv_text(rows)
    bad_line = text.splitlines().index(next(line for line in text.splitlines() if line.startswith("bad"))) + 1
    assert list(errors_of(study, text)) == [f"line {bad_line}: payload.sentences (external_id 'bad')"]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("items.txt", "x", "expected a .csv or .jsonl file"),
        ("items.csv", b"id\n\xff\xfe\n", "Not UTF-8 text."),
        ("items.csv", "", "No items in the file."),
        ("items.jsonl", "\n\n", "No items in the file."),
    ],
)
def test_files_the_command_refuses(tmp_path, make_claim_study, name, content, message):
    study = make_claim_study(items=1)
    with pytest.raises(CommandError, match=message):
        run(tmp_path, study.slug, name, content)


def test_an_unknown_study_or_file(tmp_path, make_claim_study):
    with pytest.raises(CommandError, match="No study with slug 'nope'"):
        call_command("loaditems", "nope", str(tmp_path / "items.csv"))
    study = make_claim_study(items=1)
    with pytest.raises(CommandError, match="no such file"):
        call_command("loaditems", study.slug, str(tmp_path / "missing.csv"))


def test_the_documented_examples_load(tmp_path, quest, make_claim_study):
    formats = (settings.BASE_DIR / "docs" / "formats.md").read_text()
    section = formats.split("## Items file")[1].split("\n## ")[0]
    questionnaire_csv, claim_csv = re.findall(r"```csv\n(.*?)```", section, flags=re.S)
    assert "Added 1 items" in run(tmp_path, quest.slug, "q.csv", questionnaire_csv)
    assert "Added 1 items" in run(tmp_path, make_claim_study(items=1).slug, "c.csv", claim_csv)
