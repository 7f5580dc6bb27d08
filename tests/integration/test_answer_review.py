"""Answer review: a participant's answers beside the gold, accept / flag with a reason, and
agreement figures that do not depend on which page of participants is shown."""

from __future__ import annotations

import pytest

from annotation.models import Enrollment, Participant
from annotation.services.analysis.quality import study_quality
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.flags import flag_in_study
from tests.conftest import claim_study_file
from tests.factories import AnsweredResponseFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def study_with_answers(researcher):
    study = load_study_file(
        claim_study_file(slug="mine", items=2, annotations_per_item=3), owner=researcher
    ).study
    AnsweredResponseFactory.from_specs(
        study,
        [
            {"participant": "amy", "item": "c0", "answer": {"label": "supports", "evidence": [0]}},
            {"participant": "ben", "item": "c0", "answer": {"label": "supports", "evidence": [0]}},
            {"participant": "cat", "item": "c0", "answer": {"label": "contradicts", "evidence": [2]}},
            {"participant": "amy", "item": "c1", "answer": {"label": "neutral", "evidence": []}},
        ],
    )
    return study


def person(name: str) -> Participant:
    return Participant.objects.get(platform_worker_id=name)


def test_agreement_of_one_participant_is_the_same_alone_or_with_all(study_with_answers):
    everyone = list(
        Enrollment.objects.filter(study=study_with_answers).select_related("participant").order_by("id")
    )
    together = study_quality(study_with_answers, everyone)
    for enrollment in everyone:
        alone = study_quality(study_with_answers, [enrollment])[enrollment.participant_id]
        both = together[enrollment.participant_id]
        assert (alone.agreement_compared, alone.agreement_agreed) == (
            both.agreement_compared,
            both.agreement_agreed,
        )
        assert alone.seconds == both.seconds
    cat = together[person("cat").pk]
    assert cat.agreement_compared == 4 and cat.agreement_agreed == 1  # label, 3 evidence marks: one agrees


def test_a_flagged_participant_stops_voting_and_is_measured_against_those_who_count(study_with_answers):
    """The majority is taken over the answers that count, as in the reports: once cat is
    flagged, amy meets ben alone (before: ties with cat on three of four marks), and cat
    meets the majority of amy and ben."""
    everyone = list(
        Enrollment.objects.filter(study=study_with_answers).select_related("participant").order_by("id")
    )
    before = study_quality(study_with_answers, everyone)
    assert (before[person("amy").pk].agreement_compared, before[person("amy").pk].agreement_agreed) == (1, 1)
    flag_in_study(Enrollment.objects.get(participant=person("cat")), reason="evidence never matches")

    after = study_quality(
        study_with_answers,
        list(Enrollment.objects.filter(study=study_with_answers).select_related("participant")),
    )
    amy, cat = after[person("amy").pk], after[person("cat").pk]
    assert (amy.agreement_compared, amy.agreement_agreed) == (4, 4)
    assert (cat.agreement_compared, cat.agreement_agreed) == (4, 1)


def test_the_review_page_shows_each_answer_beside_the_gold(client, study_with_answers):
    html = client.get(f"/research/s/mine/participants/{person('cat').public_id}/").content.decode()
    row = html[html.index('<table class="table" id="pages">') :]
    assert "contradicts" in row and "supports" in row  # the answer and the item's gold
    assert row.count("<tr>") == 2  # header + the one page cat was handed


def test_accept_and_flag_with_a_reason_from_the_review_page(client, study_with_answers):
    cat = person("cat")
    url = f"/research/s/mine/participants/{cat.public_id}/"
    client.post(url, {"action": "accept", "back": "detail"})
    assert Enrollment.objects.get(participant=cat).accepted
    refused = client.post(url, {"action": "flag", "reason": "  ", "confirm": "yes", "back": "detail"})
    assert refused.status_code == 400 and b"Say why you flag" in refused.content
    assert not Enrollment.objects.get(participant=cat).flagged
    client.post(
        url,
        {"action": "flag", "reason": "evidence never matches the label", "confirm": "yes", "back": "detail"},
    )
    enrollment = Enrollment.objects.get(participant=cat)
    assert enrollment.flagged and enrollment.flag_reason == "evidence never matches the label"
    listing = client.get("/research/s/mine/participants/").content.decode()
    assert 'title="evidence never matches the label">flagged' in listing
