"""API conformance review D1–D3: values the API ignored or cut instead of refusing.

A ``page_size`` that is not a whole number from 1 up answered the default page; an empty
filter (``?kind=``) answered the whole list; a 201-character ``flag_reason`` starting with a
blank was trimmed to 200 and stored. Each is now a 400 naming the parameter or field.
"""

from __future__ import annotations

import pytest

from annotation.models import Enrollment

pytestmark = pytest.mark.django_db

# The users and the owned study are written once for the module (tests/api/conftest.py).
ROWS_FOR_THE_MODULE = True


@pytest.mark.parametrize("value", ["abc", "0", "-5", "1.5", "", "٣", "²", "9" * 5000])
def test_a_page_size_that_is_not_a_positive_whole_number_is_a_400(client_for, owned_study, value):
    for path in ("/api/v1/studies/", "/api/v1/responses/", "/api/v1/studies/owned/items/"):
        answer = client_for("owner").get(path, {"page_size": value})
        assert answer.status_code == 400, (path, value)
        assert list(answer.json()) == ["page_size"]


def test_a_repeated_page_size_is_a_400_and_a_large_one_is_cut_to_the_maximum(client_for, owned_study):
    owner = client_for("owner")
    assert owner.get("/api/v1/studies/?page_size=1&page_size=abc").status_code == 400
    assert owner.get("/api/v1/studies/?page_size=100000").status_code == 200
    assert owner.get("/api/v1/studies/owned/items/?page_size=2").json()["results"].__len__() == 2


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/jobs/?kind=",
        "/api/v1/jobs/?study=",
        "/api/v1/responses/?until=",
        "/api/v1/responses/?participant=",
        "/api/v1/studies/owned/items/?system=",
        "/api/v1/studies/owned/reports/?metric=",
        "/api/v1/studies/owned/reports/?population=",
    ],
)
def test_an_empty_filter_value_is_a_400_not_the_whole_list(client_for, owned_study, path):
    name = path.split("?")[1].rstrip("=")
    answer = client_for("owner").get(path)
    assert answer.status_code == 400
    assert answer.json()[name] == ["Give a value, or leave the parameter out."]


def test_a_flag_reason_over_its_length_is_refused_not_trimmed(client_for, owned_study, enrolled):
    person = enrolled(owned_study)
    path = f"/api/v1/studies/owned/participants/{person.public_id}/"
    owner = client_for("owner")
    too_long = owner.patch(path, {"flagged": True, "flag_reason": " " + "x" * 200}, format="json")
    assert too_long.status_code == 400 and "flag_reason" in too_long.json()
    enrollment = Enrollment.objects.get(participant=person, study=owned_study)
    assert not enrollment.flagged and enrollment.flag_reason == ""
    kept = owner.patch(path, {"flagged": True, "flag_reason": " spam "}, format="json")
    assert kept.status_code == 200
    enrollment.refresh_from_db()
    assert enrollment.flagged and enrollment.flag_reason == " spam "
