"""Adaptive collection: the study option, its budget, and closing a study by its own rules.

A study's config may say ``"assignment": "adaptive"`` (docs/formats.md, "Adaptive
collection"): once every item has ``adaptive.min_answers`` pages, the next page goes to the
least settled item (``Item.priority``, written by the reports job: ``scoring.adaptive``)
rather than to the least filled one; the pick itself stays the one indexed statement of
``services.participation.assignment``. The cap per item stays the study's ``annotations_per_item`` (the
number every lock, quota and "study full" rule reads), so an adaptive study is a uniform
study whose pages past the minimum are spent where the answers disagree.

Two rules close an adaptive study, each through ``study_status.close_study_by_rule`` (one
conditional UPDATE: exactly once whoever decides first): ``adaptive.budget`` answers that
count, checked on each submit (``capacity.close_if_collected``), and ``adaptive.stop``,
the researcher's stopping rule on two systems' comparison, checked by the reports job
(``scoring.adaptive``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from annotation.errors import InputError
from annotation.kinds.base import StrictSerializer, TaskKind
from annotation.models import Study

ADAPTIVE = "adaptive"
UNIFORM = "uniform"
# The study config's keys this module owns (the kind's config is the rest).
KEYS = ("assignment", ADAPTIVE)
DEFAULT_MIN_ANSWERS = 2
DEFAULT_ALPHA = 0.05


class StopFields(StrictSerializer):
    question = serializers.CharField(max_length=200)
    systems = serializers.ListField(child=serializers.CharField(max_length=200), min_length=2, max_length=2)
    ci_excludes_zero = serializers.BooleanField(default=False)
    width = serializers.FloatField(required=False, allow_null=True, default=None, min_value=0)
    alpha = serializers.FloatField(default=DEFAULT_ALPHA, min_value=0, max_value=1)

    def validate(self, attrs):
        if attrs["systems"][0] == attrs["systems"][1]:
            raise serializers.ValidationError({"systems": ["Name two different systems."]})
        if attrs["ci_excludes_zero"] == (attrs["width"] is not None):
            raise serializers.ValidationError(
                {"ci_excludes_zero": ["Say either ci_excludes_zero: true or a width, not both."]}
            )
        if attrs["width"] is not None and not attrs["width"] > 0:
            raise serializers.ValidationError({"width": ["The width must be positive."]})
        if not 0 < attrs["alpha"] < 1:
            raise serializers.ValidationError({"alpha": ["alpha must be between 0 and 1."]})
        return attrs


class AdaptiveFields(StrictSerializer):
    min_answers = serializers.IntegerField(min_value=1, default=DEFAULT_MIN_ANSWERS)
    budget = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
    stop = StopFields(required=False, allow_null=True, default=None)


class AssignmentFields(serializers.Serializer):
    assignment = serializers.ChoiceField(choices=[UNIFORM, ADAPTIVE], default=UNIFORM)
    adaptive = AdaptiveFields(required=False, allow_null=True, default=None)


def check_assignment_config(config: dict) -> dict:
    """The config's assignment options, validated, as they are stored: ``{}`` for uniform
    assignment (the default), else ``assignment`` and ``adaptive`` with every default
    filled in. Errors name ``config.adaptive.…``."""
    given = {key: config[key] for key in KEYS if key in config}
    serializer = AssignmentFields(data=given)
    try:
        serializer.is_valid(raise_exception=True)
    except ValidationError as exc:
        raise InputError.from_validation(exc, "config") from None
    data = serializer.validated_data
    if data["assignment"] == UNIFORM:
        if data["adaptive"] is not None:
            raise InputError({"config.adaptive": ['Only with "assignment": "adaptive".']})
        return {}
    if data["adaptive"] is None:
        defaults = AdaptiveFields(data={})
        defaults.is_valid(raise_exception=True)
        data = {**data, "adaptive": defaults.validated_data}
    options = dict(data["adaptive"])
    if options["stop"] is not None:
        options["stop"] = dict(options["stop"])
    return {"assignment": ADAPTIVE, ADAPTIVE: options}


def check_stop_question(kind: TaskKind, config: dict) -> None:
    """The stopping rule (if any) of a validated ``config`` names one of the kind's questions
    on a scale (``TaskKind.scale_questions``): the difference of two systems' means is
    computed on nothing else."""
    stop = (config.get(ADAPTIVE) or {}).get("stop")
    if not stop:
        return
    scales = kind.scale_questions(config)
    if stop["question"] not in scales:
        listed = f"its questions on a scale: {', '.join(scales)}" if scales else "it has none"
        message = f"{stop['question']!r} is not a question on a scale of this study ({listed})."
        raise InputError({"config.adaptive.stop.question": [message]})


# Why adaptive assignment is refused for a study that only ranks systems: what
# ``bench/adaptive.py`` measured (docs/statistics.md, "Adaptive collection").
RANKING_REFUSED = (
    "Adaptive assignment is not offered for a study whose questions only compare systems "
    "(a ranking, or picks with nothing else but free text): its outcome is a ranking of "
    "systems, and for a ranking adaptive assignment needed 10.3% more answers than uniform "
    "assignment for the same ranking accuracy (bench/adaptive.py, 200 seeds; docs/statistics.md, "
    '"Adaptive collection"). Leave "assignment" out (uniform), or add a question on a scale '
    "or a choice for it to adapt on."
)


def adaptive_refusal(kind: TaskKind, config: dict) -> str | None:
    """Why ``config`` (validated) may not assign adaptively as ``kind``: the reason when it
    asks for adaptive assignment and every question compares systems; None otherwise. The
    overview shows it for a study stored before the rule (it keeps running)."""
    if config.get("assignment") != ADAPTIVE or not kind.compares_systems_only(config):
        return None
    return RANKING_REFUSED


def check_adaptive_pays(kind: TaskKind, config: dict, stored_config: dict | None) -> None:
    """Adaptive assignment only where it saves answers: refused for a study that only ranks
    systems (``adaptive_refusal``). A stored config that already had it and does not change
    passes (a study saved before the rule keeps running; the overview warns)."""
    reason = adaptive_refusal(kind, config)
    if reason is not None and config != stored_config:
        raise InputError({"config.assignment": [reason]})


def check_stop_systems(config: dict, systems: Iterable[str]) -> None:
    """The stopping rule (if any) names two systems among ``systems``, the items'
    ``provenance.system`` values (the rule reads those)."""
    stop = (config.get(ADAPTIVE) or {}).get("stop")
    if not stop:
        return
    known = sorted({str(name) for name in systems if name})
    missing = [name for name in stop["systems"] if name not in known]
    if missing:
        names = ", ".join(repr(name) for name in missing)
        listed = ", ".join(known) if known else "none"
        message = f"No item has the system {names} (the items' provenance.system values: {listed})."
        raise InputError({"config.adaptive.stop.systems": [message]})


@dataclass(frozen=True)
class StopRule:
    question: str
    first: str
    second: str
    excludes_zero: bool
    width: float | None
    alpha: float


@dataclass(frozen=True)
class AdaptiveSettings:
    min_answers: int  # never more than the cap (``annotations_per_item``)
    budget: int | None
    stop: StopRule | None


def adaptive_settings(study: Study) -> AdaptiveSettings | None:
    """The study's adaptive options (validated when the config was), or None for a study
    assigned uniformly."""
    config = study.config or {}
    if config.get("assignment") != ADAPTIVE:
        return None
    options = config.get(ADAPTIVE) or {}
    stop = options.get("stop")
    rule = None
    if stop:
        first, second = stop["systems"]
        excludes_zero, width = bool(stop.get("ci_excludes_zero")), stop.get("width")
        rule = StopRule(stop["question"], first, second, excludes_zero, width, stop["alpha"])
    minimum = min(int(options.get("min_answers", DEFAULT_MIN_ANSWERS)), study.annotations_per_item)
    return AdaptiveSettings(min_answers=minimum, budget=options.get("budget"), stop=rule)


@dataclass(frozen=True)
class StoppingNow:
    """The stopping rule's interval at the last reports recompute (``scoring.adaptive``): the
    first system's mean less the second's, its confidence sequence (a bound is None while a
    system has fewer than two answers), answers per system, recomputes that measured it."""

    difference: float | None
    low: float | None
    high: float | None
    n_first: int
    n_second: int
    looks: int
    met: bool
    computed_at: datetime


# ``annotation`` does not import ``scoring``: ``ScoringConfig.ready`` registers the reader of
# the stored figure (as it does the participants page's competence).
StoppingReader = Callable[[Study], StoppingNow | None]
_stopping_readers: list[StoppingReader] = []


def register_stopping_reader(reader: StoppingReader) -> None:
    """Set the function that reads the stopping rule's stored interval (one; the last wins)."""
    _stopping_readers[:] = [reader]


def stopping_now(study: Study) -> StoppingNow | None:
    """The rule's interval as the study's last reports computed it; None without a rule,
    without reports or without a reader."""
    settings = adaptive_settings(study)
    if settings is None or settings.stop is None or not _stopping_readers:
        return None
    return _stopping_readers[0](study)
