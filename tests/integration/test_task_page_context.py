"""Every page that shows one task item (the participant's page, an exam question, the
researcher's preview, MTurk's preview, adjudication, the game's round) builds its context
with ``views.task_page.task_page_context``; htmx steps are sent on with ``go_to``."""

import pytest
from django.http import QueryDict
from django.test import RequestFactory

from annotation.models import Assignment, Enrollment
from annotation.participation.views.steps import go_to
from annotation.views.task_page import task_page_context
from tests.factories import ItemFactory, ParticipantFactory

pytestmark = pytest.mark.django_db


def test_a_participants_page_is_numbered_from_their_answers():
    item = ItemFactory()
    study = item.study
    enrollment = Enrollment.objects.get(participant=ParticipantFactory(enrolled_in=study), study=study)
    enrollment.answered_count = 2
    page = Assignment(study=study, item=item, state={})
    context = task_page_context(study, item, page, enrollment=enrollment)
    assert (context["page_number"], context["page_total"]) == (3, study.items_per_session)
    assert context["kind_template"] == study.task_kind.template and context["assignment"] is page
    assert context["errors"] == context["submitted"] == {}
    assert set(study.task_kind.page_context(item, page)) <= set(context)


def test_the_place_is_left_out_without_a_number_and_posted_values_come_back_only_with_errors():
    item = ItemFactory()
    post = QueryDict("label=supported&evidence=1&evidence=2")
    page = Assignment(study=item.study, item=item, state={})
    quiet = task_page_context(item.study, item, page, post=post)
    assert "page_number" not in quiet and quiet["submitted"] == {}
    refused = task_page_context(item.study, item, page, errors={"label": ["Pick one."]}, post=post)
    assert refused["submitted"] == {"label": ["supported"], "evidence": ["1", "2"]}
    assert refused["errors"] == {"label": ["Pick one."]}


def test_go_to_redirects_a_page_and_sends_htmx_on_as_a_whole():
    plain = go_to(RequestFactory().post("/x/"), "/s/a/done/")
    assert plain.status_code == 302 and plain["Location"] == "/s/a/done/"
    htmx = go_to(RequestFactory().post("/x/", headers={"HX-Request": "true"}), "/s/a/done/")
    assert htmx.status_code == 204 and htmx["HX-Redirect"] == "/s/a/done/"
