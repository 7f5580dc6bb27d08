"""A study's versions and its frozen plan: the one writer of ``StudyVersion``.

Every way a study changes (the builder, a study file upload, the API, the admin, the
commands and jobs that add items) ends in ``record_study_version`` inside the change's own
transaction. It snapshots the study file (``study_files.study_file_of``, without ``status``: a
study going live is not a new protocol) and the analysis plan, and when their digest differs
from the latest version's it stores a new version with a readable diff. Once the plan is
frozen (``freeze_study``), such a change is refused unless it gives a reason: then it is
stored as a deviation, with its reason and time. Raising inside the writer's transaction
undoes the change itself, so the rule holds whichever way the change came in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from rest_framework import serializers

from annotation.errors import InputError, checked
from annotation.models import Study, StudyVersion

from .study_files import item_file_entry, study_file_of

REASON_FIELD = "deviation_reason"
FROZEN_REFUSAL = (
    "This study's plan is frozen: give the reason for the change (it is recorded as a "
    "deviation from the plan), or leave the study as it is."
)
NOT_A_DRAFT = "A plan is frozen before the study goes live (while it is a draft)."
DIFF_LINES = 200  # a version's diff lists at most this many changes, then how many more


class PlanFields(serializers.Serializer):
    """An analysis plan (docs/reproducibility.md): what will be reported, decided before the
    answers come in. The stopping rule and the exclusion rules the site applies are the study
    file's own settings (frozen with it); these say how the researcher will read them."""

    populations = serializers.ListField(
        child=serializers.ChoiceField(choices=["all", "passed", "adjudicated"]),
        min_length=1,
        default=["passed"],
        help_text="The populations the figures are reported for, the first being the main one.",
    )
    tests = serializers.ListField(
        child=serializers.CharField(max_length=300),
        default=list,
        help_text="The figures and tests that answer the study's questions (e.g. likert.mean by system).",
    )
    hypotheses = serializers.CharField(max_length=5000, allow_blank=True, default="")
    stopping_rule = serializers.CharField(
        max_length=2000,
        allow_blank=True,
        default="",
        help_text="When collection stops, in words (the config's adaptive stopping rule, if any, applies).",
    )
    exclusion_rules = serializers.CharField(
        max_length=2000,
        allow_blank=True,
        default="",
        help_text="Whose answers are left out and why, beyond the study's attention checks.",
    )
    sample_size = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)


def checked_plan(data) -> dict:
    """A plan as stored: every field present, bad input named as ``analysis_plan.<field>``."""
    if not isinstance(data, dict):
        raise InputError({"analysis_plan": ["An analysis plan is a JSON object."]})
    unknown = sorted(set(data) - set(PlanFields().fields))
    if unknown:
        raise InputError(
            {f"analysis_plan.{name}": ["Unknown field of an analysis plan."] for name in unknown}
        )
    try:
        return dict(checked(PlanFields, data))
    except InputError as exc:
        raise InputError({f"analysis_plan.{k}": v for k, v in exc.errors.items()}) from None


@dataclass(frozen=True)
class Snapshot:
    """The study as a version keeps it: its study file (items up to ``VERSION_ITEMS_KEPT``),
    the items' digest and count, the plan, and the digest of them all."""

    study_file: dict
    items_digest: str
    item_count: int
    plan: dict

    @property
    def digest(self) -> str:
        return digest_of({**self.study_file, "items": self.items_digest}, self.plan)


def study_snapshot(study: Study) -> Snapshot:
    """The study file without ``status`` (going live is not a new protocol); the items are
    streamed into their digest, and kept in the file while there are at most
    ``VERSION_ITEMS_KEPT`` of them."""
    data = study_file_of(study, items=False)
    data.pop("status", None)
    hashed, kept, count = hashlib.sha256(), [], 0
    for item in study.items.order_by("id").iterator(chunk_size=2000):
        entry = item_file_entry(item)
        hashed.update(_canonical(entry).encode("utf-8") + b"\n")
        count += 1
        if count <= settings.VERSION_ITEMS_KEPT:
            kept.append(entry)
    if count <= settings.VERSION_ITEMS_KEPT:
        data["items"] = kept
    plan = dict(study.analysis_plan or {})
    return Snapshot(study_file=data, items_digest=hashed.hexdigest(), item_count=count, plan=plan)


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest_of(study_file: dict, plan: dict) -> str:
    """SHA-256 of the study file and the plan as canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(_canonical({"plan": plan, "study_file": study_file}).encode("utf-8")).hexdigest()


def record_study_version(study: Study, *, user=None, source: str, reason: str = "") -> StudyVersion | None:
    """Store the study as it now stands as a new version, if it differs from the latest one;
    call inside the change's transaction. A frozen study's change needs ``reason``
    (``InputError`` on ``deviation_reason`` otherwise, which undoes the change)."""
    reason = (reason or "").strip()
    with transaction.atomic():
        study.frozen_at = (
            Study.objects.select_for_update().filter(pk=study.pk).values_list("frozen_at", flat=True).first()
        )
        now = study_snapshot(study)
        digest = now.digest
        latest = study.versions.order_by("-number").first()
        if latest is not None and latest.digest == digest:
            return None
        deviation = study.frozen_at is not None and source != StudyVersion.Source.FREEZE
        if deviation:
            check_change_reason(study, reason)
        lines = _changes(latest, now)
        version = StudyVersion.objects.create(
            study=study,
            number=(latest.number if latest is not None else 0) + 1,
            study_file=now.study_file,
            items_digest=now.items_digest,
            item_count=now.item_count,
            plan=now.plan,
            digest=digest,
            diff="\n".join(_capped(lines)),
            changed=sorted({_top(line) for line in lines}),
            author=user if getattr(user, "is_authenticated", False) else None,
            source=source,
            reason=reason,
            deviation=deviation,
        )
        Study.objects.filter(pk=study.pk).update(version=version.number)
        study.version = version.number
    return version


def check_change_reason(study: Study, reason: str) -> None:
    """A frozen study changes only with a reason (``InputError`` on ``deviation_reason``):
    the rule ``record_study_version`` applies, for a form to ask before it saves."""
    if study.frozen_at is not None and not (reason or "").strip():
        raise InputError({REASON_FIELD: [FROZEN_REFUSAL]})


def _changes(latest: StudyVersion | None, now: Snapshot) -> list[str]:
    """The diff's lines; items compared one by one when both versions kept them, else by count."""
    before = {**latest.study_file, "plan": latest.plan} if latest is not None else {}
    after = {**now.study_file, "plan": now.plan}
    if (
        latest is not None
        and latest.items_digest != now.items_digest
        and ("items" not in before or "items" not in after)
    ):
        before.pop("items", None)
        after.pop("items", None)
        return [f"items: {latest.item_count} → {now.item_count} items (changed)", *diff_lines(before, after)]
    return diff_lines(before, after)


def freeze_study(study: Study, *, user, plan) -> StudyVersion:
    """Freeze the study file and ``plan`` before the study goes live: the plan is stored, a
    version recorded, and their digest kept; from now on a change is a deviation."""
    plan = checked_plan(plan)
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.frozen_at is not None:
            raise InputError({"analysis_plan": ["This study's plan is already frozen."]})
        if locked.status != Study.Status.DRAFT:
            raise InputError({"analysis_plan": [NOT_A_DRAFT]})
        study.analysis_plan = plan
        Study.objects.filter(pk=study.pk).update(analysis_plan=plan)
        record_study_version(study, user=user, source=StudyVersion.Source.FREEZE)
        version = study.versions.order_by("-number").first()
        assert version is not None  # a study has one once anything is recorded
        frozen = {
            "frozen_at": timezone.now(),
            "frozen_digest": version.digest,
            "frozen_version": version.number,
        }
        for name, value in frozen.items():
            setattr(study, name, value)
        Study.objects.filter(pk=study.pk).update(**frozen)
    return version


def deviations(study: Study) -> list[StudyVersion]:
    return list(study.versions.filter(deviation=True).select_related("author").order_by("number"))


# --- the diff --------------------------------------------------------------------------------


def diff_lines(before, after, path: str = "") -> list[str]:
    """What changed from ``before`` to ``after``, one line per changed value, by its path
    (``config.questions[0].points: 5 → 7``). Items are matched by ``external_id``."""
    if isinstance(before, dict) and isinstance(after, dict):
        lines: list[str] = []
        for key in sorted(set(before) | set(after), key=str):
            sub = f"{path}.{key}" if path else str(key)
            if key not in before:
                lines.append(f"{sub}: added {_short(after[key])}")
            elif key not in after:
                lines.append(f"{sub}: removed (was {_short(before[key])})")
            elif key == "items" and not path:
                lines.extend(_item_lines(before[key], after[key]))
            else:
                lines.extend(diff_lines(before[key], after[key], sub))
        return lines
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            line
            for i, (b, a) in enumerate(zip(before, after, strict=True))
            for line in diff_lines(b, a, f"{path}[{i}]")
        ]
    if before == after and type(before) is type(after):
        return []
    return [f"{path}: {_short(before)} → {_short(after)}"]


def _item_lines(before: list, after: list) -> list[str]:
    old = {item.get("external_id"): item for item in before if isinstance(item, dict)}
    new = {item.get("external_id"): item for item in after if isinstance(item, dict)}
    lines = [f"items[{key}]: added" for key in new if key not in old]
    lines += [f"items[{key}]: removed" for key in old if key not in new]
    for key in new:
        if key in old:
            lines.extend(diff_lines(old[key], new[key], f"items[{key}]"))
    return lines


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "…"


def _top(line: str) -> str:
    head = line.split(":", 1)[0]
    return head.split(".", 1)[0].split("[", 1)[0]


def _capped(lines: Iterable[str]) -> list[str]:
    lines = list(lines)
    if len(lines) <= DIFF_LINES:
        return lines
    return [*lines[:DIFF_LINES], f"… and {len(lines) - DIFF_LINES} more changes"]
