"""The study builder's pages: a study made on a form from a template, a saved study's
settings and questions edited, a draft's first page previewed, a study's file downloaded.
The work is ``services.authoring.builder``'s; the form's fields are read by ``builder_form``."""

from __future__ import annotations

import json
import re

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.errors import InputError
from annotation.models import Study
from annotation.services.access import access_study_to_change, access_study_to_read, readable_studies
from annotation.services.authoring import builder, kept_files
from annotation.services.authoring.item_files import csv_header, decoded, format_of
from annotation.services.authoring.study_files import study_file_of
from annotation.services.authoring.validation import is_config_kept
from annotation.services.study_status import stored_answers
from annotation.views.task_page import task_page_context

from . import builder_form
from .decorators import researcher_required

QUESTION_PATH = re.compile(r"^config\.questions\[(\d+)\]\.?(.*)$")


@researcher_required
@require_http_methods(["GET", "POST"])
def builder_new(request: HttpRequest) -> HttpResponse:
    """Choose a template (no ``template`` yet), then fill in and save a new draft."""
    name = request.POST.get("template") or request.GET.get("template")
    if not name:
        context = {
            "templates": builder.builder_templates(),
            "own_studies": readable_studies(request.user).filter(exam__isnull=True).order_by("-updated_at"),
        }
        return render(request, "research/builder_start.html", context)
    try:
        template = _template(request, name)
    except InputError:
        return redirect("research-builder-new")
    if request.method == "GET":
        return _page(request, template=template, data=builder.as_new_study(template))
    form = _read(request, kind=template.kind, new=True)
    data = _with_template_items(request.POST, form.posted.data, template)
    errors = dict(form.errors)
    action = request.POST.get("action", "save")
    fallback = template.data.get("config")
    if action == "save" and errors:  # the rest of the form's problems, listed in the same pass (U7)
        try:
            builder.draft_study_file(data=data, upload=form.upload, fallback_config=fallback)
        except InputError as exc:
            errors.update({key: value for key, value in exc.errors.items() if key not in errors})
    elif action == "save":
        try:
            study = builder.create_study(
                user=request.user, data=data, upload=form.upload, fallback_config=fallback
            )
        except InputError as exc:
            errors.update(exc.errors)
        else:
            messages.success(
                request, f"Draft {study.slug} saved. Preview it, take part yourself, then go live."
            )
            return redirect("research-study", slug=study.slug)
    elif action == "download" and not errors:
        try:
            return _download(builder.draft_study_file(data=data, upload=form.upload))
        except InputError as exc:
            errors.update(exc.errors)
    return _page(request, template=template, data=form.posted.data, form=form, errors=errors)


@researcher_required
@require_http_methods(["GET", "POST"])
def builder_edit(request: HttpRequest, slug: str) -> HttpResponse:
    """A saved study's settings, config (while a draft) and more items: its owner's
    (``access.can_change_study``; 403 to those it is shared with)."""
    study = access_study_to_change(request.user, slug)
    if request.method == "GET":
        return _page(request, study=study, data=study_file_of(study, items=False))
    form = _read(request, kind=study.kind, new=False)
    errors = dict(form.errors)
    if request.POST.get("action", "save") == "save" and not errors:
        changes = {
            k: v
            for k, v in form.posted.data.items()
            if k not in ("slug", "kind", "status", *builder_form.EXTRAS)
        }
        try:
            reason = request.POST.get("deviation_reason", "")
            builder.change_study(
                user=request.user, study=study, changes=changes, upload=form.upload, reason=reason
            )
        except InputError as exc:
            errors.update(exc.errors)
        else:
            messages.success(request, "Changes saved.")
            return redirect("research-study", slug=study.slug)
    data = {**study_file_of(study, items=False), **form.posted.data}
    return _page(request, study=study, data=data, form=form, errors=errors)


@researcher_required
@require_POST
def builder_preview(request: HttpRequest) -> HttpResponse:
    """The draft's first page as a participant sees it, from the form as it stands; nothing
    is saved (the page's Preview button posts the form here, to a new tab)."""
    slug = request.POST.get("study", "")
    study = access_study_to_read(request.user, slug) if slug else None
    if study is not None:
        kind = study.kind
        template = None
    else:
        try:
            template = _template(request, request.POST.get("template", ""))
        except InputError as exc:
            return _preview_errors(request, exc.errors)
        kind = template.kind
    form = _read(request, kind=kind, new=study is None)
    data = form.posted.data if study is None else {**study_file_of(study, items=False), **form.posted.data}
    if template is not None:
        data = _with_template_items(request.POST, data, template)
    if form.errors:
        return _preview_errors(request, form.errors)
    try:
        page = builder.draft_page(data=data, upload=form.upload, study=study)
    except InputError as exc:
        return _preview_errors(request, exc.errors)
    context = task_page_context(page.study, page.item, page.assignment, number=1, total=page.total)
    context.update(preview=True, own_page=page.study.task_kind.has_own_page)
    return render(request, "research/builder_preview.html", context)


@researcher_required
@require_GET
def study_file(request: HttpRequest, slug: str) -> HttpResponse:
    """The study as a study file: upload it (under another slug) for the same study."""
    return _download(study_file_of(access_study_to_read(request.user, slug)))


# --- helpers -----------------------------------------------------------------------------------


def _template(request: HttpRequest, name: str) -> builder.Template:
    """A template by name, or one of the studies the user reads (``study:<slug>``: 404 for
    any other, as its overview would be)."""
    if name.startswith(builder.STUDY_TEMPLATE_PREFIX):
        slug = name.removeprefix(builder.STUDY_TEMPLATE_PREFIX)
        return builder.template_of_study(access_study_to_read(request.user, slug))
    return builder.template_named(name)


class _Form:
    """A posted builder form: the study file's values, the items file (uploaded now, or
    kept in the page from an earlier round trip) with a CSV's column rows, and the errors
    of reading them."""

    def __init__(self, posted: builder_form.Posted, upload, file: dict | None, errors: dict):
        self.posted, self.upload, self.file, self.errors = posted, upload, file, errors


def _read(request: HttpRequest, *, kind: str, new: bool) -> _Form:
    posted = builder_form.study_file_from_post(request.POST, kind=kind, new=new)
    errors = dict(posted.errors)
    upload, file = None, None
    try:
        upload, file = _upload(request, errors)
    except InputError as exc:
        errors.update(builder.items_file_errors(exc))
    return _Form(posted, upload, file, errors)


def _upload(request: HttpRequest, errors: dict) -> tuple[builder.ItemsUpload | None, dict | None]:
    """The items file (uploaded now, or kept on the server since an earlier round) and how
    the page shows it; a CSV's columns mapped wrongly are ``errors`` (the file is still
    shown, to map again)."""
    sent = request.FILES.get("items_file")
    if sent is not None:
        if (sent.size or 0) > settings.API_MAX_UPLOAD_BYTES:
            raise InputError({"file": [f"The file is larger than {settings.API_MAX_UPLOAD_BYTES:,} bytes."]})
        name, content = sent.name or "", sent.read()
        decoded(content)  # text, or the error before it is kept
        token = kept_files.keep_file(request.user, content)
    elif token := request.POST.get("items_token", ""):
        name, kept = request.POST.get("items_name", ""), kept_files.kept_file(request.user, token)
        if kept is None:
            raise InputError({"file": ["The file uploaded earlier is no longer kept; choose it again."]})
        content = kept
    else:
        return None, None
    file_format = format_of(name)
    rows, columns = [], None
    if file_format == "csv":
        rows = builder_form.column_rows(csv_header(content), request.POST)
    file = {"name": name, "token": token, "csv": file_format == "csv", "rows": rows}
    if file_format == "csv":
        try:
            columns = builder_form.column_map(rows)
        except InputError as exc:
            errors.update(builder.items_file_errors(exc))
            return None, file
    return builder.ItemsUpload(content, file_format, columns), file


def _with_template_items(post: QueryDict, data: dict, template: builder.Template) -> dict:
    if post.get("use_template_items") == "yes" and template.data.get("items"):
        return {**data, "items": template.data["items"]}
    return data


def _download(data: dict) -> HttpResponse:
    body = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    answer = HttpResponse(body, content_type="application/json; charset=utf-8")
    answer["Content-Disposition"] = f'attachment; filename="{data.get("slug") or "study"}.json"'
    return answer


def _page(
    request: HttpRequest,
    *,
    data: dict,
    template: builder.Template | None = None,
    study: Study | None = None,
    form: _Form | None = None,
    errors: dict | None = None,
) -> HttpResponse:
    values = builder_form.form_values(data)
    for raw in ("config_json", "extras_json"):  # what was typed, even when it is not JSON
        if form is not None and raw in request.POST:
            values[raw] = request.POST[raw]
    kind = study.kind if study is not None else template.kind  # type: ignore[union-attr]
    context = {
        "study": study,
        "template": template,
        "kind": kind,
        "values": values,
        "setting_fields": [
            {**f, "value": values["settings"][f["name"]]} for f in builder_form.setting_fields()
        ],
        "frozen": study is not None and is_config_kept(study),
        "stored_answers": stored_answers(study) if study is not None and is_config_kept(study) else 0,
        "file": form.file if form is not None else None,
        "roles": builder_form.ROLES,
        "template_items": len(template.data.get("items") or []) if template is not None else 0,
        "use_template_items": request.POST.get("use_template_items", "yes") == "yes",
        "from_study": template is not None and template.name.startswith(builder.STUDY_TEMPLATE_PREFIX),
        "errors": [(_readable(path, values["questions"]), msgs) for path, msgs in (errors or {}).items()],
        **builder_form.question_choices(),
    }
    return render(request, "research/builder.html", context, status=400 if errors else 200)


def _readable(path: str, questions: list[dict]) -> str:
    """An error's place as the page names it: ``config.questions[2].labels`` → ``question 3
    (fluency): labels``."""
    match = QUESTION_PATH.match(path)
    if not match:
        return path
    index = int(match[1])
    qid = questions[index]["id"] if index < len(questions) else ""
    return f"question {index + 1}{f' ({qid})' if qid else ''}: {match[2] or 'question'}"


def _preview_errors(request: HttpRequest, errors: dict) -> HttpResponse:
    context = {"errors": list(errors.items()), "preview": True}
    return render(request, "research/builder_preview.html", context, status=400)
