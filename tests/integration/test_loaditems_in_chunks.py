"""loaditems of a file longer than a chunk: read, checked and written a chunk at a time in one
transaction, so a file of any length loads without a query past PostgreSQL's 65,535
parameters (a 100,000-row file once failed there after minutes), and an error in any chunk
is named by its line and writes nothing, earlier chunks included.

The chunk is made small here (``item_load.CHUNK_ROWS``) so that a few thousand rows cross
several chunks; the code path is the one a million rows take.
"""

from __future__ import annotations

import csv
import io
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from annotation.errors import InputError
from annotation.models import Item, Study
from annotation.services.authoring import item_load
from annotation.services.authoring.item_files import ALREADY_THERE, add_items_from_file
from annotation.services.authoring.studies import add_items, load_study_file
from tests.conftest import claim_study_file

pytestmark = pytest.mark.django_db

CHUNK = 500
CONFIG = {"questions": [{"id": "fluency", "type": "scale", "points": 5, "text": "How fluent is it?"}]}
HEADER = ["id", "context", "passage.a.text", "passage.a.system"]


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(item_load, "CHUNK_ROWS", CHUNK)


@pytest.fixture
def questionnaire_with_one_item():
    """A questionnaire study of one-passage items, holding one item (``old``)."""
    made = Study.objects.create(slug="many", title="Many", kind="questionnaire", config=CONFIG)
    Item.objects.create(study=made, external_id="old", payload=row_payload("Old text."))
    return made


def row_payload(text: str) -> dict:
    return {"context": "Rate this.", "passages": [{"id": "a", "text": text, "system": "sys1"}]}


def rows(count: int) -> list[list[str]]:
    """``count`` rows after the header; row n (from 0) is on line n + 2, id ``i<n>``."""
    return [[f"i{n}", "Rate this.", f"Passage number {n}.", f"sys{n % 3}"] for n in range(count)]


def csv_bytes(body: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([HEADER, *body])
    return out.getvalue().encode()


def load(tmp_path, slug: str, content: bytes) -> str:
    path = tmp_path / "items.csv"
    path.write_bytes(content)
    out = StringIO()
    call_command("loaditems", slug, str(path), stdout=out)
    return out.getvalue()


def largest_parameter_count(run) -> int:
    """The most parameters any one statement of ``run()`` sent to the database."""
    counts = [0]

    def count(execute, sql, params, many, context):
        if params is not None:
            counts.append(max((len(p) for p in params), default=0) if many else len(params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        run()
    return max(counts)


def test_a_file_of_many_chunks_loads_whole_and_no_query_grows_with_the_file(
    tmp_path, questionnaire_with_one_item
):
    content = csv_bytes(rows(2345))  # five chunks, the last one short
    said: list[str] = []
    most = largest_parameter_count(lambda: said.append(load(tmp_path, "many", content)))
    assert said == ["Added 2345 items to many.\n"]
    assert Item.objects.filter(study=questionnaire_with_one_item).count() == 2346
    assert Item.objects.get(study=questionnaire_with_one_item, external_id="i2344").payload == {
        "context": "Rate this.",
        "passages": [{"id": "a", "text": "Passage number 2344.", "system": "sys1"}],
    }
    # Bounded by the chunk, not by the file: a 100,000-row file's lookup once sent 100,000.
    assert most <= CHUNK + 10


def test_errors_in_later_chunks_are_named_by_line_and_nothing_is_written(questionnaire_with_one_item):
    body = rows(1500)
    body[1198][2] = ""  # line 1200: a blank passage text, in the third chunk
    body[1398][0] = "i10"  # line 1400 repeats line 12's id, two chunks later
    body[898][0] = "old"  # line 900: an id the study already has
    with pytest.raises(InputError) as exc:
        add_items_from_file(questionnaire_with_one_item, csv_bytes(body), file_format="csv")
    errors = exc.value.errors
    assert list(errors) == [
        "line 900: external_id (external_id 'old')",
        "line 1200: passage.a.text (external_id 'i1198')",
        "line 1400: external_id (external_id 'i10')",
    ]
    assert errors["line 900: external_id (external_id 'old')"] == [ALREADY_THERE]
    assert errors["line 1400: external_id (external_id 'i10')"] == ["Repeats the external_id of line 12."]
    assert list(
        Item.objects.filter(study=questionnaire_with_one_item).values_list("external_id", flat=True)
    ) == ["old"]


def test_the_command_reports_a_late_error_and_writes_none_of_the_earlier_chunks(
    tmp_path, questionnaire_with_one_item
):
    body = rows(1800)
    body[1700][3] = "x" * 300  # line 1702: a system name too long, after three chunks were written
    with pytest.raises(CommandError) as exc:
        load(tmp_path, "many", csv_bytes(body))
    assert "nothing was written" in str(exc.value)
    assert "line 1702: passage.a.system (external_id 'i1700')" in str(exc.value)
    assert Item.objects.filter(study=questionnaire_with_one_item).count() == 1


def test_text_that_is_not_utf8_late_in_the_file_writes_nothing(tmp_path, questionnaire_with_one_item):
    content = csv_bytes(rows(1600)) + b"i9999,Rate this.,caf\xe9,sys1\n"
    with pytest.raises(CommandError) as exc:
        load(tmp_path, "many", content)
    assert "file: Not UTF-8 text." in str(exc.value)
    assert Item.objects.filter(study=questionnaire_with_one_item).count() == 1


def test_a_file_of_bad_rows_lists_the_first_thousand_errors_and_counts_the_rest(questionnaire_with_one_item):
    body = [[f"b{n}", "Rate this.", "", "sys1"] for n in range(1300)]  # every text blank
    with pytest.raises(InputError) as exc:
        add_items_from_file(questionnaire_with_one_item, csv_bytes(body), file_format="csv")
    errors = exc.value.errors
    assert len(errors) == item_load.MAX_LISTED_ERRORS + 1
    assert "line 2: passage.a.text (external_id 'b0')" in errors
    assert errors["file"] == ["300 more errors not listed (the first 1000 are); nothing was written."]
    assert Item.objects.filter(study=questionnaire_with_one_item).count() == 1


def test_a_study_file_and_generated_items_longer_than_a_chunk_keep_queries_bounded():
    data = claim_study_file(slug="long-claims", items=700)
    most = largest_parameter_count(lambda: load_study_file(data))
    study = Study.objects.get(slug="long-claims")
    assert Item.objects.filter(study=study).count() == 700 and most <= CHUNK + 10
    data["items"][650]["payload"]["claim"] = "Changed late in the file."
    reloaded: list = []
    most = largest_parameter_count(lambda: reloaded.append(load_study_file(data)))
    assert (reloaded[0].items_created, reloaded[0].items_updated) == (0, 1) and most <= CHUNK + 10
    generated = claim_study_file(items=800)["items"]  # the first 700 ids are the study's already
    added: list = []
    most = largest_parameter_count(lambda: added.append(add_items(study, generated)))
    assert (added[0].added, added[0].skipped) == (100, 700) and most <= CHUNK + 10
    assert Item.objects.filter(study=study).count() == 800
