"""A study's human subset: people answer a random subset of the items, a model rater (the
judge) answers every item, and the reports combine both (``scoring/reports/hybrid.py``,
prediction-powered estimates; docs/statistics.md, "Humans and a judge combined").

The design is ``Study.human_subset``: ``{"fraction": f}`` (every item with probability f),
``{"by_system": {"A": f_A, ...}, "fraction": f}`` (stratified by the items'
``provenance.system``, ``fraction`` for the systems not named; without it those items are
all people's, probability 1), and ``seed``. Each item's draw is its own: a uniform number
from a hash of the seed and the item's id, below its probability or not (Poisson sampling),
so that the draw of an item never depends on the others or on the order they were loaded,
and items added later are drawn alike (``item_inclusion``, called by the one writer of
items). Each item logs its probability (``Item.human_inclusion``), which the reports weigh
by, and whether it was drawn (``Item.for_humans``), which the assignment serves people only.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.db import transaction

from annotation.errors import InputError
from annotation.models import Item, Study
from annotation.services.populations import humans_q

FIELD = "human_subset"


@dataclass(frozen=True)
class HumanSubset:
    fraction: float  # the probability of items whose system by_system does not name
    by_system: dict[str, float]
    seed: int

    def probability(self, provenance: dict | None) -> float:
        system = (provenance or {}).get("system")
        return self.by_system.get(str(system), self.fraction) if system is not None else self.fraction


def check_human_subset(raw) -> HumanSubset | None:
    """The design from its JSON (None: no subset, every item is people's). Raises
    ``InputError`` naming the field of every bad value."""
    if raw in (None, {}):
        return None
    if not isinstance(raw, dict):
        raise InputError({FIELD: ["Expected an object with fraction, by_system and seed."]})
    errors: dict[str, list[str]] = {}
    unknown = sorted(set(raw) - {"fraction", "by_system", "seed"})
    if unknown:
        errors[FIELD] = [f"Unknown keys: {', '.join(unknown)}."]
    fraction = _probability(raw.get("fraction", 1.0), f"{FIELD}.fraction", errors)
    by_system: dict[str, float] = {}
    systems = raw.get("by_system", {})
    if not isinstance(systems, dict):
        errors[f"{FIELD}.by_system"] = ["Expected an object: system → fraction."]
    else:
        for system, value in systems.items():
            by_system[str(system)] = _probability(value, f"{FIELD}.by_system.{system}", errors)
    seed = raw.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        errors[f"{FIELD}.seed"] = ["Expected a whole number from 0 to 2^63 − 1."]
    if "fraction" not in raw and not systems and not errors:
        errors[FIELD] = ["Give a fraction, or fractions by_system."]
    if errors:
        raise InputError(errors)
    return HumanSubset(fraction, by_system, seed)


def _probability(value, place: str, errors: dict[str, list[str]]) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        errors[place] = ["Expected a number above 0 and at most 1."]
        return 1.0
    return float(value)


def uniform_draw(seed: int, external_id: str) -> float:
    """The item's own uniform number in [0, 1), from the seed and its id alone."""
    digest = hashlib.sha256(f"{seed}\x00{external_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def item_inclusion(
    design: HumanSubset | None, external_id: str, provenance: dict | None
) -> tuple[bool, float | None]:
    """(for_humans, human_inclusion) of one item under the design (no design: (True, None))."""
    if design is None:
        return True, None
    probability = design.probability(provenance)
    return uniform_draw(design.seed, external_id) < probability, probability


def study_design(study: Study) -> HumanSubset | None:
    """The study's stored design (checked when it was set), read from the database: the
    instance in hand may predate it."""
    stored = Study.objects.filter(pk=study.pk).values_list("human_subset", flat=True).first()
    return check_human_subset(stored or None)


def set_human_subset(*, study: Study, raw) -> dict[str, int]:
    """Store the design and draw every item of the study under it (attention checks stay
    everyone's). Refused, changing nothing, once people have answered the study: the items
    they answered were chosen under the design in force. Returns counts of the items."""
    design = check_human_subset(raw)
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.responses.filter(humans_q()).exists():
            raise InputError(
                {FIELD: ["People have answered this study: its human subset can no longer change."]}
            )
        items = list(
            Item.objects.filter(study=study).only("id", "external_id", "provenance", "is_attention_check")
        )
        for item in items:
            if item.is_attention_check:
                item.for_humans, item.human_inclusion = True, None
            else:
                item.for_humans, item.human_inclusion = item_inclusion(
                    design, item.external_id, item.provenance
                )
        Item.objects.bulk_update(items, ["for_humans", "human_inclusion"], batch_size=1000)
        locked.human_subset = raw if design is not None else {}
        locked.save(update_fields=["human_subset", "updated_at"])
    study.human_subset = locked.human_subset
    ordinary = [item for item in items if not item.is_attention_check]
    drawn = sum(item.for_humans for item in ordinary)
    return {"items": len(ordinary), "for_humans": drawn, "for_models_only": len(ordinary) - drawn}
