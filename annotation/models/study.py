"""A study: one task kind, its configuration, and how many annotations it wants."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotation.languages import check_study_language


def new_pseudonym_salt() -> str:
    """A per-study secret that keys the pseudonyms in exports (never exported itself)."""
    return secrets.token_hex(16)


class Study(models.Model):
    """A set of items of one kind shown to participants under one protocol."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        LIVE = "live", "Live"
        CLOSED = "closed", "Closed"

    slug = models.SlugField(max_length=80, unique=True)
    title = models.CharField(max_length=200)
    kind = models.CharField(max_length=40, help_text="A task kind from annotation/kinds/.")
    description = models.TextField(blank=True, help_text="One paragraph for the home page.")
    instructions = models.TextField(blank=True, help_text="Markdown, rendered safely.")
    consent = models.TextField(blank=True, help_text="Markdown shown before the first page.")
    config = models.JSONField(default=dict, blank=True, help_text="Validated by the kind.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    closed_by_quota = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Closed by itself on reaching its quota (services/capacity.py): it goes back to "
        "live when answers stop counting and it is short again.",
    )

    class ClosedBecause(models.TextChoices):
        RESEARCHER = "researcher", "closed by a researcher"
        QUOTA = "quota", "every item had its answers"
        BUDGET = "budget", "the answer budget was spent"
        STOPPING_RULE = "stopping_rule", "the stopping rule was met"

    closed_at = models.DateTimeField(null=True, blank=True, editable=False)
    closed_because = models.CharField(
        max_length=20, choices=ClosedBecause.choices, blank=True, default="", db_default="", editable=False
    )
    closed_details = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text="What the figures were when a rule closed the study (the stopping rule's interval).",
    )
    public = models.BooleanField(default=False, help_text="Listed on the home page for anyone.")
    annotations_per_item = models.PositiveIntegerField(default=3, validators=[MinValueValidator(1)])
    items_per_session = models.PositiveIntegerField(default=10, validators=[MinValueValidator(1)])
    attention_check_rate = models.FloatField(
        default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    max_attention_failures = models.PositiveIntegerField(
        default=0, help_text="Failed attention checks allowed before screen-out."
    )
    assignment_timeout_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="Empty: the site default."
    )
    completion_code = models.CharField(max_length=64, blank=True)
    pay_partial_sessions = models.BooleanField(
        default=False,
        help_text="When the items run out before a participant has had items_per_session pages, "
        "they still get the completion code (otherwise they are told the session fell short).",
    )
    screenout_code = models.CharField(max_length=64, blank=True)
    completion_url = models.URLField(
        max_length=500, blank=True, help_text="Crowd platform return link; {code} is replaced."
    )
    examples = models.JSONField(
        default=list, blank=True, help_text="Worked examples: [{title, payload, answer, explanation}]."
    )
    faq = models.JSONField(default=list, blank=True, help_text="[{question, answer}] (Markdown answers).")
    expected_seconds_per_page = models.PositiveIntegerField(
        null=True, blank=True, help_text="Shown to participants as the usual time a page takes."
    )
    min_seconds_per_page = models.PositiveIntegerField(
        null=True, blank=True, help_text="Answers given faster are flagged too_fast (not rejected)."
    )
    hold_submit = models.BooleanField(
        default=False,
        help_text="Keep each page's submit button off until min_seconds_per_page have passed.",
    )
    language = models.CharField(
        max_length=10,
        default="en",
        db_default="en",
        validators=[check_study_language],
        help_text="The language of the participant pages' own words (buttons, errors, codes "
        "pages); the study's texts are shown as written. One of the site's LANGUAGES.",
    )
    close_when_full = models.BooleanField(
        null=True,
        blank=True,
        help_text="Close the study once every item has its answers. Empty: on for crowd studies "
        "(a completion code, not public), off otherwise.",
    )
    participants_may_erase = models.BooleanField(
        default=False,
        db_default=False,
        help_text="The Leave page offers participants to delete their answers in this study.",
    )
    authenticity_signals = models.BooleanField(
        default=True,
        db_default=True,
        help_text="On pages with a free-text question, record how the text got there (pastes, "
        "keystrokes, time the page was hidden; never the text), named on the consent page "
        "(docs/authenticity.md).",
    )
    retention_days = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Days after a participant's arrival when their platform id is deleted (empty: kept).",
    )
    retention_erases_answers = models.BooleanField(
        default=False,
        db_default=False,
        help_text="At the end of the retention period, erase the participant's answers too.",
    )
    qualification = models.ForeignKey(
        "annotation.Exam",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="required_by",
        help_text="An exam participants must pass before the first page.",
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="studies"
    )
    shared_with = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        through="StudyShare",
        related_name="shared_studies",
        help_text="Researchers the study is shared with besides its owner, each in a role (StudyShare).",
    )
    pseudonym_salt = models.CharField(
        max_length=64,
        default=new_pseudonym_salt,
        editable=False,
        help_text="Keys the participant pseudonyms of this study's exports; stays on the server.",
    )
    human_subset = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text="Which items people answer when a model rater answers every item: "
        '{"fraction": f, "by_system": {system: f}, "seed": n}; empty: every item '
        "(services.authoring.human_subset).",
    )
    # Versions and the frozen plan (``services/authoring/versions.py`` is their one writer).
    version = models.PositiveIntegerField(
        default=0,
        db_default=0,
        editable=False,
        help_text="The number of the study's latest version (0: none recorded yet); each answer "
        "carries the number it was given under.",
    )
    analysis_plan = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text="The analysis the researcher plans: populations, tests, stopping and exclusion rules.",
    )
    frozen_at = models.DateTimeField(null=True, blank=True, editable=False)
    frozen_digest = models.CharField(
        max_length=64,
        blank=True,
        default="",
        db_default="",
        editable=False,
        help_text="SHA-256 of the study file and the analysis plan as frozen.",
    )
    frozen_version = models.PositiveIntegerField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def task_kind(self):
        """The kind module's object (see annotation.kinds)."""
        from annotation.kinds import get_kind

        return get_kind(self.kind)

    @property
    def closes_when_full(self) -> bool:
        """Whether reaching the quota closes the study: crowd studies (a completion code, not
        listed publicly) do unless told not to; public volunteer studies and the game do not."""
        if self.close_when_full is not None:
            return self.close_when_full
        return bool(self.completion_code) and not self.public

    @property
    def timeout_minutes(self) -> int:
        return self.assignment_timeout_minutes or settings.ASSIGNMENT_TIMEOUT_MINUTES


class StudyShare(models.Model):
    """A researcher a study is shared with, in one role; what each role may do is decided in
    one place, ``annotation.services.access.ROLE_ABILITIES``. The study's own owner needs no
    row (``Study.owner``); a row of role ``owner`` makes a co-owner."""

    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        ANALYST = "analyst", "Analyst"
        OPERATOR = "operator", "Operator"
        VIEWER = "viewer", "Viewer"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="shares")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="study_shares")
    # Analyst: what sharing meant before roles (read and analyse; no platform ids, no change).
    role = models.CharField(
        max_length=10, choices=Role.choices, default=Role.ANALYST, db_default=Role.ANALYST
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "user"], name="one_share_per_study_and_user")]
        ordering = ["study", "user__username"]

    def __str__(self) -> str:
        return f"{self.study} → {self.user} ({self.role})"
