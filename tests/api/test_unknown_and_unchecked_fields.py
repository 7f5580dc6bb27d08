"""Review finding 21 (adversarial review): fields were silently ignored (unknown or read-only
ones in a PATCH, unknown ones in import lines and query strings) and an import took an answer
time before the shown time; ``page=-1`` and a bad cursor answered 404. PATCH answers 400 naming
the field and changes nothing; an import line with either problem rejects the file, naming the
line and field; an unknown query parameter, a bad page or cursor is a 400 naming it."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Assignment, Participant, Response, Study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("field", ["completion_cod", "slug", "owner", "status", "qualification", "exam"])
def test_patch_refuses_unknown_and_read_only_fields(client_for, api_ranking, field):
    answer = client_for("owner").patch(
        "/api/v1/studies/api-ranking/", {field: "x", "title": "Changed"}, format="json"
    )
    assert answer.status_code == 400 and field in answer.json()
    assert Study.objects.get(pk=api_ranking.pk).title != "Changed"


GOOD = {"participant": "ann", "item": "c0", "answer": {"label": "neutral"}}


def import_error(tmp_path, slug: str, line: dict) -> str:
    path = tmp_path / "responses.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(line) + "\n")
    with pytest.raises(CommandError) as caught:
        call_command("importresponses", slug, str(path))
    return str(caught.value)


def nothing_written() -> bool:
    return not (Response.objects.exists() or Assignment.objects.exists() or Participant.objects.exists())


def test_an_import_line_with_an_unknown_field_is_refused(tmp_path, make_claim_study):
    study = make_claim_study()
    line = {**GOOD, "participant": "bob", "answerd_at": "2024-05-01T10:00:42Z"}
    assert "line 2: answerd_at (item 'c0'): Unknown field in an import line." in import_error(
        tmp_path, study.slug, line
    )
    assert nothing_written()


@pytest.mark.parametrize(
    ("times", "message"),
    [
        ({"shown_at": "2025-05-01T10:00:00Z", "answered_at": "2024-05-01T10:00:00Z"}, "before shown_at"),
        ({"answered_at": "2099-01-01T00:00:00Z"}, "Lies in the future."),
        ({"shown_at": "2099-01-01T00:00:00Z"}, "Comes before shown_at"),
    ],
)
def test_an_import_line_answered_before_shown_or_in_the_future_is_refused(
    tmp_path, make_claim_study, times, message
):
    study = make_claim_study()
    error = import_error(tmp_path, study.slug, {**GOOD, "participant": "bob", **times})
    assert "line 2: answered_at (item 'c0')" in error and message in error
    assert nothing_written()


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/v1/studies/owned/reports/?metric__startswith=c", "metric__startswith"),
        ("/api/v1/responses/?participnt=x", "participnt"),
        ("/api/v1/studies/?page=-1", "page"),
        ("/api/v1/responses/?cursor=not-a-cursor", "cursor"),
    ],
)
def test_unknown_query_parameters_and_bad_pages_are_a_400(client_for, owned_study, path, field):
    answer = client_for("owner").get(path)
    assert answer.status_code == 400 and field in answer.json()
