"""Adjudication pages: the items annotators disagree on, and recording a final answer."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotation.errors import InputError
from annotation.models import Adjudication, Assignment, Item
from annotation.numbers import whole_number
from annotation.services.access import access_study_to_read, can_change_study, require_study_change
from annotation.services.analysis.adjudication import (
    DEFAULT_POINTS_APART,
    NOTE_MAX_CHARS,
    adjudicate,
    adjudication_state,
    item_answers,
    study_disagreements,
)
from annotation.views.task_page import task_page_context

from .decorators import researcher_required


@researcher_required
def adjudication_list(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_to_read(request.user, slug)
    points_apart = _points_apart(request)
    after = _number(request.GET.get("after"), 0)
    found = study_disagreements(
        study, points_apart=points_apart, after=after, limit=DISAGREEMENTS_PER_PAGE + 1
    )
    shown = found[:DISAGREEMENTS_PER_PAGE]
    context = {
        "study": study,
        "points_apart": points_apart,
        "disagreements": shown,
        "next_after": shown[-1].item.pk if len(found) > DISAGREEMENTS_PER_PAGE else None,
        "after": after,
    }
    return render(request, "research/adjudication.html", context)


@researcher_required
@require_http_methods(["GET", "POST"])
def adjudication_item(request: HttpRequest, slug: str, item_id: int) -> HttpResponse:
    study = access_study_to_read(request.user, slug)
    item = Item.objects.filter(study=study, pk=item_id).first()
    if item is None:
        raise Http404("No such item in this study.")
    item.study = study
    kind = study.task_kind
    page = Assignment(study=study, item=item, state=adjudication_state(study, item))
    errors: dict[str, list[str]] = {}
    if request.method == "POST":
        require_study_change(request.user, study)  # an adjudicated answer is stored: the owner's
        answer = kind.answer_from_form(request.POST, item, page)
        try:
            adjudicate(
                study=study, item=item, answer=answer, note=request.POST.get("note", ""), user=request.user
            )
        except InputError as exc:
            errors = {key.removeprefix("answer."): value for key, value in exc.errors.items()}
        else:
            messages.success(request, f"Item {item.external_id}: adjudicated answer stored.")
            return redirect("research-adjudication-item", slug=slug, item_id=item.pk)
    decided = Adjudication.objects.select_related("response", "decided_by").filter(item=item).first()
    context = task_page_context(study, item, page, errors=errors, post=request.POST)
    context.update(
        item=item,
        answers=item_answers(study, item),
        decided=decided,
        note=request.POST.get("note", ""),
        note_max_chars=NOTE_MAX_CHARS,
        can_change=can_change_study(request.user, study),
    )
    return render(request, "research/adjudication_item.html", context, status=400 if errors else 200)


DISAGREEMENTS_PER_PAGE = 100


def _points_apart(request: HttpRequest) -> int:
    """``?k=``: ratings more than this many points apart disagree (default 1)."""
    return _number(request.GET.get("k"), DEFAULT_POINTS_APART)


def _number(text: str | None, default: int) -> int:
    """A whole number ≥ 0 from the query string; the default for anything else."""
    number = whole_number(text)
    return default if number is None else max(0, number)
