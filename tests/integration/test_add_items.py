"""Adding generated items to a study: validated by the kind, all or nothing, known ids skipped."""

from __future__ import annotations

import pytest

from annotation.errors import InputError
from annotation.models import Item, Study
from annotation.services.authoring.studies import add_items, ensure_study

pytestmark = pytest.mark.django_db


def claim_item(external_id: str, claim: str = "The bridge is in Rome.") -> dict:
    return {
        "external_id": external_id,
        "payload": {"claim": claim, "passage": "The bridge is in Rome. It is old."},
        "provenance": {"system": "ROME", "source_id": "case-1"},
    }


def test_items_are_validated_by_the_kind_and_known_ids_skipped(make_claim_study):
    study = make_claim_study(items=2)
    result = add_items(study, [claim_item("c0"), claim_item("new-1"), claim_item("new-2")])
    assert (result.added, result.skipped) == (2, 1)
    added = Item.objects.get(study=study, external_id="new-1")
    assert added.payload["sentences"] == ["The bridge is in Rome.", "It is old."]  # split by the kind
    assert added.provenance == {"system": "ROME", "source_id": "case-1"}
    assert Item.objects.get(study=study, external_id="c0").payload["claim"] == "Claim number 0 holds."


def test_one_bad_item_writes_nothing_and_is_named(make_claim_study):
    study = make_claim_study(items=1)
    items = [claim_item("ok"), claim_item("bad", claim=""), claim_item("ok")]
    with pytest.raises(InputError) as exc:
        add_items(study, items)
    assert set(exc.value.errors) == {
        "items[1].payload.claim (external_id 'bad')",
        "items[2].external_id (external_id 'ok')",
    }
    assert Item.objects.filter(study=study).count() == 1


def test_ensure_study_creates_a_draft_and_refuses_another_kind(make_claim_study):
    created = ensure_study(slug="fresh", kind="claim")
    assert (created.kind, created.status, created.title) == ("claim", "draft", "fresh")
    assert ensure_study(slug="fresh", kind="claim") == created
    make_claim_study(slug="claims-x")
    with pytest.raises(InputError, match="is a 'claim' study, not 'likert'"):
        ensure_study(slug="claims-x", kind="likert")
    with pytest.raises(InputError, match="Unknown kind"):
        ensure_study(slug="other", kind="no-such-kind")
    with pytest.raises(InputError) as exc:
        ensure_study(slug="not a slug", kind="claim")
    assert "slug" in exc.value.errors
    assert set(Study.objects.values_list("slug", flat=True)) == {"fresh", "claims-x"}
