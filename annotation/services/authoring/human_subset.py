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
from rest_framework import serializers

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


class HumanSubsetField(serializers.JSONField):
    """The design as a study setting (a study file, the API, the builder): checked by
    ``check_human_subset``, its errors under ``human_subset.<key>``; stored as given, ``{}``
    for none. Drawing the items is ``set_human_subset``'s, called by the study's writers."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault(
            "help_text",
            "Which items people answer when a model rater (a judge) answers every item: "
            '{"fraction": f} or {"by_system": {"A": f, ...}, "fraction": f}, with "seed": n; '
            "{} for every item. Fixed once people have answered.",
        )
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        try:
            design = check_human_subset(data)
        except InputError as exc:
            inside = {path.removeprefix(FIELD).lstrip("."): m for path, m in exc.errors.items()}
            raise serializers.ValidationError(
                {key or "non_field_errors": m for key, m in inside.items()}
            ) from None
        return data if design is not None else {}


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


def set_human_subset(*, study: Study, raw) -> dict[str, int] | None:
    """Store the design and draw every item of the study under it (attention checks stay
    everyone's). Refused, changing nothing, once people have answered the study: the items
    they answered were chosen under the design in force. Returns counts of the items; None
    when the design is the one in force (nothing to do, so nothing refused).

    The study's writers call it for a ``human_subset`` setting (``study_changes.update_study``
    for PATCH, the builder and ``manage.py humansubset``; ``studies.load_study_file``)."""
    design = check_human_subset(raw)
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if (locked.human_subset or {}) == (raw if design is not None else {}):
            study.human_subset = locked.human_subset
            return None
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
    return human_subset_counts(study)


def human_subset_counts(study: Study) -> dict[str, int]:
    """How many ordinary items the study has, how many people answer, how many are left to
    the model raters."""
    ordinary = Item.objects.filter(study=study, is_attention_check=False)
    total, drawn = ordinary.count(), ordinary.filter(for_humans=True).count()
    return {"items": total, "for_humans": drawn, "for_models_only": total - drawn}
