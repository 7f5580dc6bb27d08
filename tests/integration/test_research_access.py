"""Who counts as a researcher, and which studies they reach."""

import pytest
from django.http import Http404

from annotation.services.access import access_study_for_researcher, is_researcher, researcher_studies
from tests.factories import researcher_user

pytestmark = pytest.mark.django_db


def test_researchers_are_staff_or_in_the_group(django_user_model):
    plain = django_user_model.objects.create_user("plain")
    staff = django_user_model.objects.create_user("staff", is_staff=True)
    member = researcher_user("member")
    assert [is_researcher(u) for u in (plain, staff, member)] == [False, True, True]


def test_researcher_reaches_only_own_studies(django_user_model, make_claim_study):
    alice = django_user_model.objects.create_user("alice", is_staff=True)
    bob = django_user_model.objects.create_user("bob", is_staff=True)
    root = django_user_model.objects.create_superuser("root", "", "x")
    study = make_claim_study()
    study.owner = alice
    study.save()
    assert access_study_for_researcher(alice, study.slug) == study
    with pytest.raises(Http404):
        access_study_for_researcher(bob, study.slug)
    assert list(researcher_studies(root)) == [study]
    assert list(researcher_studies(bob)) == []
