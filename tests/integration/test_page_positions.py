"""A participant's pages in a study are numbered 1, 2, … in the order they were handed out,
whoever writes them: the site's pages, an import, a model's answers, a guest's pages moved
to an account. The next number is worked out in one module (``assignment.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.utils import timezone

from annotation.models import Assignment, Participant
from annotation.services.analysis.model_answers import ModelAnswer, model_participant, store_model_answers
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.participation.assignment import create_assignment
from annotation.services.participation.guest_history import merge_guest_into_account
from tests.factories import AnsweredResponseFactory, ParticipantFactory

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
LABEL = {"label": "supports", "evidence": [0]}


def positions(participant: Participant, study) -> list[tuple[str, int]]:
    pages = Assignment.objects.filter(participant=participant, study=study).order_by("position")
    return [(page.item.external_id, page.position) for page in pages.select_related("item")]


def line(participant: str, item: str) -> str:
    return f'{{"participant": "{participant}", "item": "{item}", "answer": {{"label": "neutral"}}}}'


def test_imports_continue_after_the_participants_pages(make_claim_study):
    study = make_claim_study(items=5)
    AnsweredResponseFactory(study=study, item="c0", participant="ann", answer=LABEL)
    import_responses(study, [line("ann", "c1"), line("bob", "c1"), line("ann", "c2")])
    import_responses(study, [line("ann", "c3")])
    ann = Participant.objects.get(platform_worker_id="ann")
    c4 = study.items.get(external_id="c4")
    create_assignment(study=study, item=c4, participant=ann, now=timezone.now())

    assert positions(ann, study) == [("c0", 1), ("c1", 2), ("c2", 3), ("c3", 4), ("c4", 5)]
    assert positions(Participant.objects.get(platform_worker_id="bob"), study) == [("c1", 1)]


def test_a_models_refused_answers_leave_no_gap_in_its_pages(make_claim_study):
    study = make_claim_study(items=3)
    c0, c1, c2 = (study.items.get(external_id=f"c{n}") for n in range(3))
    rater = model_participant({"kind": "llm", "model": "m", "version": "1"})
    store_model_answers(
        study,
        rater,
        [ModelAnswer(c0, raw="?", answer=None, error="no label"), ModelAnswer(c1, raw="s", answer=LABEL)],
    )
    store_model_answers(study, rater, [ModelAnswer(c2, raw="s", answer=LABEL)])

    assert positions(rater, study) == [("c1", 1), ("c2", 2)]


def test_a_guests_pages_moved_to_an_account_follow_the_accounts(make_claim_study, django_user_model):
    study = make_claim_study(items=4)
    account = ParticipantFactory(enrolled_in=study, user=django_user_model.objects.create_user("returning"))
    guest = ParticipantFactory(enrolled_in=study)
    for item in ("c0", "c1"):
        AnsweredResponseFactory(study=study, item=item, participant=account, answer=LABEL)
    for item in ("c1", "c2", "c3"):  # c1: the account's answer stays
        AnsweredResponseFactory(study=study, item=item, participant=guest, answer=LABEL)

    merge = merge_guest_into_account(guest=guest, account=account)

    assert (merge.carried, merge.kept_account) == (2, 1)
    assert positions(account, study) == [("c0", 1), ("c1", 2), ("c2", 3), ("c3", 4)]


def test_no_service_works_out_a_next_position_of_its_own():
    """``Max("position")`` (last page + 1) is read in ``assignment.py`` only; batch writers
    take their numbers from ``next_positions``."""
    own = re.compile(r"""Max\(\s*["']position["']|max\(\w*\.?position\)""")
    places = [
        path.relative_to(ROOT).as_posix()
        for package in ("annotation", "scoring", "workers")
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts and own.search(path.read_text())
    ]
    assert places == ["annotation/services/participation/assignment.py"]
