"""Whether a study has room for one more participant, and closing it at its quota.

A participant is only asked to consent when a page is free for them: someone who arrives
at a full study is told so at once (and asked to return it on their crowd platform),
never sent through consent and instructions to an empty task. A study whose every item
has the answers it wants closes itself when ``Study.closes_when_full``, and opens again
when answers stop counting and it is short (see docs/crowd.md, "When a study fills up").
"""

from __future__ import annotations

from django.db.models import Sum
from psycopg import sql

from annotation.models import Item, Study
from annotation.services.db import sql_rows
from annotation.services.populations import counted_per_item, counted_per_study, people_items
from annotation.services.study_status import change_study_status, close_study_by_rule

from .adaptive import adaptive_settings
from .assignment import first_of, release_expired_assignments
from .attention_schedule import attention_pages


def study_is_full(study: Study) -> bool:
    """No ordinary item has a free slot: every one is answered or held as often as wanted.

    Pages held past their time are given back first, so a slot left by someone who
    walked away counts as free.
    """
    release_expired_assignments(study=study)
    open_items = people_items(study).filter(slots_taken__lt=study.annotations_per_item)
    return not first_of(open_items)


def quota_reached(study: Study) -> bool:
    """Every ordinary item has as many answers that count (``populations``) as the study
    wants (and there are items)."""
    items = people_items(study)
    if not items.exists():
        return False
    return not items.annotate(n=counted_per_item()).filter(n__lt=study.annotations_per_item).exists()


def close_if_collected(study: Study, *, item: Item) -> bool:
    """After an answer that counts was stored on ``item``: close a live study that has
    what it wanted, its quota (``close_if_quota_reached``) or an adaptive study's answer
    budget (``close_if_budget_spent``); True if this answer closed it. Every path that
    stores a participant's answer asks here, so both rules hold on all of them."""
    return close_if_quota_reached(study, item=item) or close_if_budget_spent(study)


def close_if_quota_reached(study: Study, *, item: Item) -> bool:
    """After an answer that counts was stored on ``item``: close a live study that this
    answer made full, when its setting says so; True if closed.

    Only the answer that completes its item (the item now has exactly the answers wanted)
    can close the study, so a study a researcher reopened while full (to collect more) is
    not closed again by the next arrival or answer; a study reopened while short closes
    when it fills up.
    """
    if study.status != Study.Status.LIVE or not study.closes_when_full:
        return False
    wanted = study.annotations_per_item
    if _slots_taken(item) < wanted:
        return False
    done = Item.objects.filter(pk=item.pk).annotate(n=counted_per_item()).values_list("n", flat=True).first()
    if done != wanted or not quota_reached(study):
        return False
    change_study_status(study, status=Study.Status.CLOSED, by_quota=True)
    return True


ITEM_SLOTS = sql_rows.Statement(
    "roft_item_slots",
    sql.SQL("SELECT slots_taken FROM {items} WHERE id = %s").format(items=sql_rows.table(Item)),
)


def _slots_taken(item: Item) -> int:
    """The item's live pages now (``Item.slots_taken``). Its answers that count hold slots,
    so an item with fewer slots taken than the study wants is not complete: a submit reads
    this one row (a prepared statement: nothing to plan) and counts the item's answers, their
    participants and enrollments only past it."""
    rows = sql_rows.execute(ITEM_SLOTS, [item.pk])
    return rows[0][0] if rows else 0


def reopen_if_short(study: Study) -> bool:
    """A study the quota closed goes back to live once answers stopped counting and it is
    short again (a participant flagged or excluded); True if reopened. A study a
    researcher closed stays closed."""
    study.refresh_from_db(fields=["status", "closed_by_quota"])
    if study.status != Study.Status.CLOSED or not study.closed_by_quota or quota_reached(study):
        return False
    change_study_status(study, status=Study.Status.LIVE)
    return True


def places_wanted(study: Study) -> int:
    """How many more participants the study needs for the answers it still lacks: the usable
    answers missing on its ordinary items (``populations``) over the ordinary pages of one
    session (a session's attention-check pages, ``attention_schedule.attention_pages``, fill none)."""
    items = people_items(study).annotate(n=counted_per_item())
    missing = sum(max(study.annotations_per_item - n, 0) for n in items.values_list("n", flat=True))
    ordinary_pages = max(study.items_per_session - len(attention_pages(study, 0)), 1)
    return -(-missing // ordinary_pages)


def close_if_budget_spent(study: Study) -> bool:
    """After an answer that counts: close a live adaptive study whose answers that count
    reached its budget; True if this call closed it.

    The items' live pages (``slots_taken``: answered or held) are summed first, one read
    of the pick's index over the study's items and none of its answers; only once they
    reach the budget are the answers that count counted."""
    options = adaptive_settings(study)
    if options is None or options.budget is None or study.status != Study.Status.LIVE:
        return False
    items = Item.objects.filter(study=study, is_attention_check=False)
    if (items.aggregate(taken=Sum("slots_taken"))["taken"] or 0) < options.budget:
        return False
    answers = Study.objects.filter(pk=study.pk).annotate(n=counted_per_study()).values_list("n", flat=True)[0]
    if answers < options.budget:
        return False
    details = {"budget": options.budget, "answers": answers}
    return close_study_by_rule(study, because=Study.ClosedBecause.BUDGET, details=details)
