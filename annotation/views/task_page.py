"""The context of every page that shows one task item, on both faces: the participant's
page and exam question, the game's round, and the researcher's previews and adjudication.
It lives here, outside both faces, so neither imports the other."""

from __future__ import annotations

from annotation.models import Enrollment, Study


def next_page(study: Study, enrollment: Enrollment) -> tuple[int, int]:
    """(N, M) of 'page N of M' for a participant's next page: N counts their answers
    stored so far, M the pages a session has."""
    return enrollment.answered_count + 1, study.items_per_session


def task_page_context(
    study: Study,
    item,
    assignment,
    *,
    number: int | None = None,
    total: int | None = None,
    enrollment: Enrollment | None = None,
    kind=None,
    errors: dict | None = None,
    post=None,
) -> dict:
    """What every page showing one task item renders with: the kind's template and page
    context, the page's place (``number`` of ``total``; a participant's next page where
    ``enrollment`` is given; left out when neither is),
    and a refused answer's ``errors`` with what was posted (``post``), so the form shows it
    again. ``kind``: the item's kind where it is not ``study``'s (an exam's questions)."""
    kind = kind or study.task_kind
    if enrollment is not None:
        number, total = next_page(study, enrollment)
    context = {"study": study, "assignment": assignment}
    if enrollment is not None:  # a researcher trying their own study: base.html says so (U13)
        context["test_run"] = enrollment.is_test
    if number is not None:
        context.update(page_number=number, page_total=total)
    context.update(
        kind_template=kind.template,
        errors=errors or {},
        submitted={key: post.getlist(key) for key in post} if errors and post is not None else {},
    )
    context.update(kind.page_context(item, assignment))
    return context
