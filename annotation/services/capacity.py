"""Whether a study has room for one more participant, and closing it at its quota.

A participant is only asked to consent when a page is free for them: someone who arrives
at a full study is told so at once (and asked to return it on their crowd platform),
never sent through consent and instructions to an empty task. A study whose every item
has the answers it wants closes itself when ``Study.closes_when_full``.
"""

from __future__ import annotations

from django.db.models import Count, Q

from annotation.models import Assignment, Item, Study

from .assignment import release_expired_assignments
from .research import change_study_status


def study_is_full(study: Study) -> bool:
    """No ordinary item has a free slot: every one is answered or held as often as wanted.

    Pages held past their time are given back first, so a slot left by someone who
    walked away counts as free.
    """
    release_expired_assignments(study=study)
    open_items = Item.objects.filter(
        study=study, is_attention_check=False, slots_taken__lt=study.annotations_per_item
    )
    return not open_items.exists()


def quota_reached(study: Study) -> bool:
    """Every ordinary item has as many answers as the study wants (and there are items)."""
    answered = Count("assignments", filter=Q(assignments__status=Assignment.Status.ANSWERED))
    items = Item.objects.filter(study=study, is_attention_check=False)
    if not items.exists():
        return False
    return not items.annotate(n=answered).filter(n__lt=study.annotations_per_item).exists()


def close_if_quota_reached(study: Study) -> bool:
    """Close a live study that reached its quota, when its setting says so; True if closed."""
    if study.status != Study.Status.LIVE or not study.closes_when_full or not quota_reached(study):
        return False
    change_study_status(study, status=Study.Status.CLOSED)
    return True
