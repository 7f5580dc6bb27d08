"""Django admin for studies, items, attention checks, participants and (read-only) responses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, cast

from django import forms
from django.contrib import admin
from django.contrib.messages import ERROR, SUCCESS
from django.db.models import Count, Exists, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce

from .errors import InputError
from .models import (
    Assignment,
    AttentionCheck,
    Enrollment,
    Erasure,
    Exam,
    ExamAttempt,
    FollowUp,
    Item,
    Job,
    ModelExplanation,
    Participant,
    PlatformBonus,
    PlatformCall,
    PlatformDecision,
    PlatformEvent,
    PlatformStudy,
    ResearcherInvitation,
    Response,
    Study,
    StudyShare,
)
from .services.access import researcher_accounts
from .services.authoring.erasure import erase, erase_everywhere
from .services.authoring.exam_settings import check_qualification, detach_exam_from_unpermitted_studies
from .services.authoring.study_fields import STUDY_SETTINGS
from .services.authoring.validation import (
    check_exam_study,
    check_kind_and_config,
    is_exam,
    kind_named,
    validate_item,
)
from .services.authoring.versions import REASON_FIELD, check_change_reason, record_study_version
from .services.jobs import JOB_KINDS, cancel_job, check_new_job, queue_job
from .services.participation.flags import flag_in_study, unflag_in_study
from .services.populations import counted_per_item, counted_per_study, items_per_study
from .services.study_status import CLOSING_FIELDS, change_study_status
from .shares import percent

if TYPE_CHECKING:  # django-stubs' names for annotated rows; nothing of them runs
    from django_stubs_ext import WithAnnotations


class StudyCounts(TypedDict):
    """What ``StudyAdmin.get_queryset`` annotates each study with."""

    n_items: int
    n_answered: int
    exam_study: bool
    n_attempts: int


class ItemCounts(TypedDict):
    """What ``_ItemAdminBase.get_queryset`` annotates each item with."""

    n_answered: int


def add_input_errors(form: forms.BaseForm, exc: InputError, rename: dict[str, str] | None = None) -> None:
    """A service's errors on the form: each on the field its path starts with (``payload``
    for ``payload.claim``), with the whole path before the service's own message, as the
    API and the loader name it."""
    for path, messages in exc.errors.items():
        head, _, rest = path.partition(".")
        field: str | None = (rename or {}).get(head, head)
        if field not in form.fields:
            field, rest = None, path
        for message in messages:
            form.add_error(field, f"{path}: {message}" if rest else message)


# The study's fields that are part of its study file: a change to one is a new version.
STUDY_FILE_FIELDS = {*STUDY_SETTINGS, "slug", "kind", "config", "examples", "faq", "qualification"}


class DeviationReasonForm(forms.ModelForm):
    """A form that may change a study whose plan is frozen: it asks why
    (``versions.check_change_reason``) before anything is saved."""

    deviation_reason = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Only when the study's plan is frozen: why it is changed (recorded as a deviation).",
    )

    def frozen_study(self) -> Study | None:
        """The study whose frozen plan this form's change touches (None: a new one, nothing
        frozen yet). Each admin form says it (the study itself, an exam's, an item's): a form
        that did not would skip the deviation check, so the base refuses to guess."""
        raise NotImplementedError(f"{type(self).__name__} must say which study it changes")

    def changes_study_file(self) -> bool:
        return bool(set(self.changed_data) - {REASON_FIELD})

    def clean(self) -> dict[str, Any]:
        super().clean()
        study = self.frozen_study()
        if study is not None and study.frozen_at is not None and self.changes_study_file():
            try:
                check_change_reason(study, self.cleaned_data.get(REASON_FIELD, ""))
            except InputError as exc:
                add_input_errors(self, exc)
        return self.cleaned_data


class StudyAdminForm(DeviationReasonForm):
    """A study as the admin saves it: kind and config checked as on every other way in.

    (No ``Meta``: the admin builds the form for its model with every field.)"""

    def frozen_study(self) -> Study | None:
        return self.instance if self.instance.pk else None

    def changes_study_file(self) -> bool:
        return bool(set(self.changed_data) & STUDY_FILE_FIELDS)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if "kind" not in data or "config" not in data:
            return data  # the field's own error is shown
        study = self.instance if self.instance.pk else None
        try:
            data["config"] = check_kind_and_config(
                study,
                kind_named(data["kind"]),
                data["config"] or {},
                kept_items=study.items.all() if study else (),
            )
        except InputError as exc:
            add_input_errors(self, exc)
        if study is not None and data.get("public"):
            try:
                check_exam_study(study, public=True)
            except InputError as exc:
                add_input_errors(self, exc)
        if data.get("qualification") is not None and data.get("slug"):
            try:
                check_qualification(
                    data["qualification"].study.slug, slug=data["slug"], owner=data.get("owner")
                )
            except InputError as exc:
                add_input_errors(self, exc)
        return data


class ExamAdminForm(DeviationReasonForm):
    """An exam as the admin saves it: its study's items and pass mark follow the exam rules."""

    def frozen_study(self) -> Study | None:
        return self.cleaned_data.get("study")

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if data.get("study") is None or data.get("pass_mark") is None:
            return data
        try:
            check_exam_study(data["study"], pass_mark=data["pass_mark"], public=data["study"].public)
        except InputError as exc:
            add_input_errors(self, exc)
        return data


class ItemAdminForm(DeviationReasonForm):
    """An item as the admin saves it: payload, gold and the attention and exam rules checked
    by the study's kind, as for a study file or an upload."""

    attention_checks_only = False

    def frozen_study(self) -> Study | None:
        return self.cleaned_data.get("study")

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        study = data.get("study")
        if study is None or "payload" not in data or "gold" not in data:
            return data
        try:
            data["payload"], data["gold"] = validate_item(
                kind_named(study.kind),
                study.config,
                external_id=data.get("external_id", ""),
                payload=data["payload"],
                gold=data["gold"],
                is_attention_check=self.attention_checks_only or data.get("is_attention_check", False),
                exam=is_exam(study),
            )
        except InputError as exc:
            add_input_errors(self, exc, rename={"attention_check": "is_attention_check"})
        return data


class AttentionCheckAdminForm(ItemAdminForm):
    attention_checks_only = True


class StudyShareInline(admin.TabularInline):
    """Who else reaches the study, each in a role (``access.ROLE_ABILITIES``): researchers only."""

    model = StudyShare
    extra = 1
    fields = ["user", "role"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user":
            kwargs["queryset"] = researcher_accounts()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    form = StudyAdminForm
    inlines = [StudyShareInline]
    list_display = ["slug", "title", "kind", "status", "public", "item_count", "progress", "owner"]
    list_filter = ["kind", "status", "public"]
    search_fields = ["slug", "title"]
    prepopulated_fields = {"slug": ["title"]}
    # The status and the closing record have one writer (``study_status``): the actions
    # below, never the form (a new study starts as a draft).
    readonly_fields = [
        "status", "closed_by_quota", *CLOSING_FIELDS,
        "version", "frozen_at", "frozen_version", "frozen_digest", "created_at", "updated_at",
    ]  # fmt: skip
    actions = ["go_live", "close"]

    @admin.action(description="Go live (open the selected studies to participants)")
    def go_live(self, request, queryset):
        self._change_status(request, queryset, Study.Status.LIVE)

    @admin.action(description="Close the selected studies")
    def close(self, request, queryset):
        self._change_status(request, queryset, Study.Status.CLOSED)

    def _change_status(self, request, queryset, status: str) -> None:
        """Each study through ``change_study_status``; a refused change is named, per study."""
        for study in queryset.order_by("slug"):
            try:
                change_study_status(study, status=status)
            except InputError as exc:
                self.message_user(request, f"{study.slug}: {exc.summary()}", ERROR)
            else:
                self.message_user(request, f"{study.slug} is now {study.status}.", SUCCESS)

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("owner")
            .annotate(
                n_items=items_per_study(),
                n_answered=counted_per_study(),
                exam_study=Exists(Exam.objects.filter(study=OuterRef("pk"))),
                n_attempts=Coalesce(
                    Subquery(
                        ExamAttempt.objects.filter(exam__study=OuterRef("pk"))
                        .values("exam")
                        .annotate(n=Count("id"))
                        .values("n"),
                        output_field=IntegerField(),
                    ),
                    0,
                ),
            )
        )

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "owner":
            kwargs["queryset"] = researcher_accounts()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        detach_exam_from_unpermitted_studies(form.instance)  # its sharing may have changed
        reason = form.cleaned_data.get(REASON_FIELD, "")
        record_study_version(form.instance, user=request.user, source="admin", reason=reason)

    @admin.display(description="items", ordering="n_items")
    def item_count(self, study: WithAnnotations[Study, StudyCounts]) -> int:
        return study.n_items

    @admin.display(description="responses / wanted")
    def progress(self, study: WithAnnotations[Study, StudyCounts]) -> str:
        """An exam has no quota: each attempt answers every question, so it counts attempts."""
        if study.exam_study:
            return f"exam: {study.n_attempts} attempt{'s' if study.n_attempts != 1 else ''}"
        wanted = study.n_items * study.annotations_per_item
        share = f" ({percent(study.n_answered, wanted)}%)" if wanted else ""
        return f"{study.n_answered} / {wanted}{share}"


class _ItemAdminBase(admin.ModelAdmin):
    list_display = ["external_id", "study", "is_attention_check", "answered"]
    list_filter = ["study"]
    search_fields = ["external_id"]
    list_select_related = ["study"]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        reason = form.cleaned_data.get(REASON_FIELD, "")
        record_study_version(obj.study, user=request.user, source="admin", reason=reason)

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        record_study_version(obj.study, user=request.user, source="admin")

    def has_delete_permission(self, request, obj=None):
        """A frozen study's items are not deleted here (a deviation needs its reason: the
        study file upload or the API, which ask for one)."""
        if obj is not None and obj.study.frozen_at is not None:
            return False
        return super().has_delete_permission(request, obj)

    def delete_queryset(self, request, queryset):
        """The selected items but a frozen study's (named), each study then a new version."""
        frozen = queryset.filter(study__frozen_at__isnull=False)
        for slug in sorted(set(frozen.values_list("study__slug", flat=True))):
            self.message_user(request, f"{slug}: its plan is frozen; its items were kept.", ERROR)
        deleted = queryset.filter(study__frozen_at__isnull=True)
        studies = list(Study.objects.filter(pk__in=deleted.values("study_id")))
        super().delete_queryset(request, deleted)
        for study in studies:
            record_study_version(study, user=request.user, source="admin")

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(n_answered=self.answers())

    def answers(self):
        """Per item, the answers that count toward ``annotations_per_item``."""
        return counted_per_item()

    @admin.display(description="answered", ordering="n_answered")
    def answered(self, item: WithAnnotations[Item, ItemCounts]) -> int:
        return item.n_answered


@admin.register(Item)
class ItemAdmin(_ItemAdminBase):
    form = ItemAdminForm
    list_filter = ["study", "is_attention_check"]


@admin.register(AttentionCheck)
class AttentionCheckAdmin(_ItemAdminBase):
    form = AttentionCheckAdminForm

    def get_queryset(self, request):
        return super().get_queryset(request).filter(is_attention_check=True)

    def answers(self):
        """A check counts toward no quota: every answer to it, whoever gave it."""
        return Count("responses")

    def save_model(self, request, obj, form, change):
        obj.is_attention_check = True
        super().save_model(request, obj, form, change)  # and a new version of its study


def _erasure_preview(objs, request):
    """What the delete page lists: the rows named, not a cascade (``erase`` decides what goes,
    pages and answers the admin may not delete one by one included)."""
    return [str(obj) for obj in objs], {}, set(), []


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    """Blocking is the one site-wide mark (an admin's act); a flag belongs to one study
    (flag enrollments below)."""

    list_display = ["public_id", "source", "blocked", "created_at"]
    list_filter = ["source", "blocked"]
    search_fields = ["public_id", "platform_worker_id"]
    readonly_fields = ["public_id", "created_at"]
    actions = ["block", "unblock"]

    # Deleting is an erasure from every study (docs/privacy.md): the places go back, the
    # reports recompute, a tombstone stays; never a bare cascade.
    def get_deleted_objects(self, objs, request):
        return _erasure_preview(objs, request)

    def delete_model(self, request, obj):
        erase_everywhere(request.user, obj, how=Erasure.How.ADMIN)

    def delete_queryset(self, request, queryset):
        for participant in queryset:
            erase_everywhere(request.user, participant, how=Erasure.How.ADMIN)

    @admin.action(description="Block the selected participants")
    def block(self, request, queryset):
        queryset.update(blocked=True)

    @admin.action(description="Unblock the selected participants")
    def unblock(self, request, queryset):
        queryset.update(blocked=False)


@admin.register(Enrollment)
class EnrollmentAdmin(admin.ModelAdmin):
    list_display = [
        "participant",
        "study",
        "status",
        "answered_count",
        "points_total",
        "attention_failed",
        "flagged",
        "excluded",
    ]
    list_filter = ["study", "status", "flagged", "excluded"]
    list_select_related = ["participant", "study"]
    readonly_fields = ["flagged", "flag_reason", "flagged_by", "flagged_at"]
    actions = ["flag", "unflag"]

    # Deleting an enrollment erases the participant from its study (docs/privacy.md).
    def get_deleted_objects(self, objs, request):
        return _erasure_preview(objs, request)

    def delete_model(self, request, obj):
        erase(obj.participant, studies=[obj.study], by=request.user, how=Erasure.How.ADMIN)

    def delete_queryset(self, request, queryset):
        for enrollment in queryset.select_related("participant", "study"):
            erase(enrollment.participant, studies=[enrollment.study], by=request.user, how=Erasure.How.ADMIN)

    @admin.action(description="Flag in their study (their answers stop counting)")
    def flag(self, request, queryset):
        for enrollment in queryset.select_related("study"):
            flag_in_study(enrollment, reason="flagged by an admin", by=request.user)

    @admin.action(description="Clear the flag in their study")
    def unflag(self, request, queryset):
        for enrollment in queryset.select_related("study"):
            unflag_in_study(enrollment, by=request.user)


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Assignment)
class AssignmentAdmin(_ReadOnly):
    list_display = ["participant", "study", "item", "position", "status", "assigned_at", "expires_at"]
    list_filter = ["study", "status"]
    list_select_related = ["participant", "study", "item"]


@admin.register(Response)
class ResponseAdmin(_ReadOnly):
    list_display = [
        "id",
        "study",
        "item",
        "participant",
        "points",
        "correct",
        "is_attention_check",
        "flagged",
    ]
    list_filter = ["study", "is_attention_check", "flagged", "too_fast", "imported"]
    list_select_related = ["study", "item", "participant"]


class JobStartForm(forms.ModelForm):
    """Start a job from the admin: a kind, its study, its parameters (checked by the kind)."""

    kind = forms.ChoiceField(choices=())
    parameters = forms.JSONField(initial=dict, required=False)

    class Meta:
        model = Job
        fields = ["kind", "study", "parameters"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["kind"]).choices = [(name, name) for name in sorted(JOB_KINDS)]
        self.fields["parameters"].help_text = "A JSON object. " + "; ".join(
            f"{name}: {', '.join(spec.parameters.Serializer().fields) or 'none'}"
            for name, spec in sorted(JOB_KINDS.items())
        )

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if self.errors:
            return data
        try:
            data["parameters"] = check_new_job(
                kind=data["kind"], parameters=data.get("parameters") or {}, study=data.get("study")
            )
        except InputError as exc:
            add_input_errors(self, exc)
        return data


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "study", "status", "percent", "message", "created_at", "finished_at"]
    list_filter = ["kind", "status"]
    actions = ["cancel"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = JobStartForm
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request, obj=None):
        return ["kind", "study", "parameters"] if obj is None else [f.name for f in Job._meta.fields]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else [f.name for f in Job._meta.fields]

    def save_model(self, request, obj, form, change):
        """A new job is created for the admin and queued once the transaction commits."""
        if change:
            return
        obj.parameters = form.cleaned_data["parameters"]
        obj.created_by = request.user
        obj.save()
        queue_job(obj)

    @admin.action(description="Cancel the selected jobs")
    def cancel(self, request, queryset):
        for job in queryset:
            cancel_job(job.pk)


@admin.register(Exam)
class ExamAdmin(admin.ModelAdmin):
    form = ExamAdminForm
    list_display = ["study", "pass_mark", "attempts_allowed"]
    list_select_related = ["study"]

    def save_model(self, request, obj, form, change):
        """An exam's settings are its study file's ``exam`` block: a new version of the study."""
        super().save_model(request, obj, form, change)
        reason = form.cleaned_data.get(REASON_FIELD, "")
        record_study_version(obj.study, user=request.user, source="admin", reason=reason)


@admin.register(ExamAttempt)
class ExamAttemptAdmin(_ReadOnly):
    list_display = ["participant", "exam", "number", "status", "correct_count", "question_count"]
    list_filter = ["exam", "status"]
    list_select_related = ["participant", "exam__study"]


@admin.register(ModelExplanation)
class ModelExplanationAdmin(_ReadOnly):
    """The simulatability jobs' explanations, raw text and all (written by the jobs only)."""

    list_display = ["question_id", "model", "mode", "answer", "problem", "prompt_version", "created_at"]
    list_filter = ["mode", "variant", "model", "prompt_version"]
    search_fields = ["question_id"]


@admin.register(FollowUp)
class FollowUpAdmin(_ReadOnly):
    """Follow-ups with their generator, duplicate status and the explaining model's answer."""

    list_display = ["explanation", "generator", "index", "status", "similarity", "model_answer"]
    list_filter = ["status", "answer_status", "generator"]
    list_select_related = ["explanation"]


@admin.register(ResearcherInvitation)
class ResearcherInvitationAdmin(admin.ModelAdmin):
    """Researcher invitations, listed. They are made on the Invitations research page, the
    only place their link is shown (once); deleting an open one withdraws it."""

    list_display = ["email", "created_by", "created_at", "expires_at", "accepted_by", "accepted_at"]
    list_select_related = ["created_by", "accepted_by"]
    search_fields = ["email"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


# --- the crowd platforms' APIs: the audit log and the records of decisions and bonuses, read only


@admin.register(PlatformCall)
class PlatformCallAdmin(_ReadOnly):
    list_display = ["created_at", "study", "user", "platform", "method", "path", "status", "dry_run"]
    list_filter = ["platform", "method", "dry_run", "study"]
    list_select_related = ["study", "user"]


@admin.register(Erasure)
class ErasureAdmin(_ReadOnly):
    list_display = ["erased_at", "study", "erased_by", "how", "answers", "pages", "exam_attempts"]
    list_filter = ["how", "study"]
    list_select_related = ["study", "erased_by"]


@admin.register(PlatformDecision)
class PlatformDecisionAdmin(_ReadOnly):
    list_display = ["created_at", "study", "platform", "submission_id", "action", "state", "sent_at"]
    list_filter = ["platform", "action", "state"]
    list_select_related = ["study"]


@admin.register(PlatformEvent)
class PlatformEventAdmin(_ReadOnly):
    """The ids of the events a platform sent (webhooks); what each did is in the audit log."""

    list_display = ["received_at", "study", "platform", "event_id", "submission_id", "status", "sent_at"]
    list_filter = ["platform", "status"]
    list_select_related = ["study"]


@admin.register(PlatformBonus)
class PlatformBonusAdmin(_ReadOnly):
    list_display = [
        "created_at",
        "study",
        "platform",
        "participant",
        "reason",
        "amount_cents",
        "state",
        "batch_id",
    ]
    list_filter = ["platform", "state"]
    list_select_related = ["study", "participant"]


@admin.register(PlatformStudy)
class PlatformStudyAdmin(admin.ModelAdmin):
    """The ids a study was published under (set by the jobs) and its bonus cap (editable)."""

    list_display = ["study", "prolific_study_id", "mturk_hit_id", "bonus_cap_cents"]
    readonly_fields = ["prolific_study_id", "mturk_hit_id", "mturk_sandbox", "reward_cents"]
