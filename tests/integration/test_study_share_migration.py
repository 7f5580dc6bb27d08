"""Migration 0028: the shares made before roles meant reading and analysing, so each becomes
an analyst share (and a second run adds nothing). Driven through the migration's own function
with the old table's rows standing in, not a migrate back and forth (seconds per test)."""

import importlib
from types import SimpleNamespace

import pytest

from annotation.models import StudyShare
from tests.factories import researcher_user

pytestmark = pytest.mark.django_db

migration = importlib.import_module("annotation.migrations.0030_study_share_roles")


class OldShares:
    """``apps`` as the migration sees it: the old plain through table holds ``rows``."""

    def __init__(self, rows):
        through = SimpleNamespace(objects=SimpleNamespace(all=lambda: rows))
        self.models = {
            "Study": SimpleNamespace(shared_with=SimpleNamespace(through=through)),
            "StudyShare": StudyShare,
        }

    def get_model(self, app_label, name):
        assert app_label == "annotation"
        return self.models[name]


def test_every_old_share_becomes_an_analyst_share_once(make_claim_study):
    study = make_claim_study()
    alice, bob = researcher_user("alice", password="pw"), researcher_user("bob", password="pw")
    rows = [SimpleNamespace(study_id=study.pk, user_id=user.pk) for user in (alice, bob)]
    migration.shares_become_analysts(OldShares(rows), None)
    migration.shares_become_analysts(OldShares(rows), None)
    assert sorted(StudyShare.objects.values_list("user__username", "role")) == [
        ("alice", "analyst"),
        ("bob", "analyst"),
    ]
