"""What the site did on the crowd platforms' APIs: the audit log, and the records that make
each money-moving call happen at most once (invariant 12, docs/crowd.md)."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator
from django.db import models

from annotation.platforms.money import MAX_BONUS_CAP_CENTS


class Platform(models.TextChoices):
    PROLIFIC = "prolific", "Prolific"
    MTURK = "mturk", "Mechanical Turk"


class PlatformCall(models.Model):
    """One call to a crowd platform (or, in a dry run, one call that would have been made):
    what was sent and what came back; or one event a platform sent us (method ``EVENT``):
    what arrived, what we answered and what it did. Written by ``platforms.audit`` only,
    never changed."""

    study = models.ForeignKey(
        "annotation.Study", null=True, on_delete=models.SET_NULL, related_name="platform_calls"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    job = models.ForeignKey(
        "annotation.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    platform = models.CharField(max_length=10, choices=Platform.choices)
    method = models.CharField(max_length=40, help_text="HTTP method, or the MTurk operation.")
    path = models.CharField(max_length=300, help_text="The API path (Prolific) or the endpoint (MTurk).")
    request_body = models.JSONField(default=dict, blank=True)
    status = models.PositiveIntegerField(
        null=True, blank=True, help_text="The reply's HTTP status; empty: none came."
    )
    response_body = models.JSONField(default=dict, blank=True)
    error = models.TextField(
        blank=True, help_text="Why no usable reply came (refused connection, time-out…)."
    )
    dry_run = models.BooleanField(
        default=False, help_text="Made by a dry run: a read was sent, a write only printed (no status)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["study", "-id"], name="platformcall_study_recent")]

    def __str__(self) -> str:
        return f"{self.method} {self.path} → {self.status or self.error[:40] or 'dry run'}"


class PlatformStudy(models.Model):
    """A study's life on the platforms: the ids it was published under and its bonus cap."""

    study = models.OneToOneField("annotation.Study", on_delete=models.CASCADE, related_name="platform")
    prolific_study_id = models.CharField(max_length=64, blank=True)
    mturk_hit_id = models.CharField(max_length=64, blank=True)
    mturk_sandbox = models.BooleanField(default=False)
    reward_cents = models.PositiveIntegerField(
        null=True, blank=True, help_text="The reward it was published with."
    )
    bonus_cap_cents = models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(MAX_BONUS_CAP_CENTS)],
        help_text="The most one participant may be paid in bonuses in this study, in cents (0: no bonuses).",
    )
    prolific_hook_secret = models.BinaryField(
        default=b"",
        blank=True,
        editable=False,
        help_text="The Prolific workspace's webhook secret, encrypted (platforms.tokens); empty: no webhook.",
    )

    def __str__(self) -> str:
        return f"{self.study} on the platforms"


class PlatformDecision(models.Model):
    """An approve or reject decided for one submission (Prolific) or assignment (MTurk).

    Created SENDING (and claimed by the review that created it) before the call and marked
    SENT after it: only the claiming review sends, and a submission with a SENT decision is
    never sent a second transition. A SENDING row left by a crash is sent again
    only while the platform still lists the submission as awaiting review."""

    class Action(models.TextChoices):
        APPROVE = "APPROVE", "Approve"
        REJECT = "REJECT", "Reject"

    class State(models.TextChoices):
        SENDING = "sending", "Sending"
        SENT = "sent", "Sent"

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="platform_decisions")
    platform = models.CharField(max_length=10, choices=Platform.choices)
    submission_id = models.CharField(
        max_length=64, help_text="Prolific's submission id or MTurk's AssignmentId."
    )
    participant = models.ForeignKey(
        "annotation.Participant", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=10, choices=Action.choices)
    message = models.TextField(blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.SENDING)
    claimed_at = models.DateTimeField(
        null=True, blank=True, help_text="When a review took it to send (empty: no review holds it)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["platform", "submission_id"], name="platformdecision_once"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.submission_id} ({self.state})"


class PlatformBonus(models.Model):
    """One bonus for one participant and reason, through its states:

    NEW (recorded) → CREATING (claimed by one run, whose create call is going out) → CREATED
    (in a bulk bonus the platform knows, not paid) → PAYING (the pay call is going out) → PAID;
    on MTurk, which pays in one call, NEW → PAYING → PAID. The one state machine is
    ``platforms.bonuses``. A create call that failed goes back to NEW (creating pays nothing); a
    pay call that did nothing goes back to the state before it; one whose outcome is unknown (a
    crash, a time-out, a 5xx) stays PAYING and is never paid again (MTurk: except under the same
    token within its day) until the researcher settles it
    (``platforms.bonuses.settle``, by the key in ``batch_id``: Prolific's bulk bonus id or
    MTurk's UniqueRequestToken)."""

    class State(models.TextChoices):
        NEW = "new", "Recorded"
        CREATING = "creating", "Being created on the platform"
        CREATED = "created", "Created on the platform"
        PAYING = "paying", "Being paid (outcome unknown until settled)"
        PAID = "paid", "Paid"
        UNPAID = "unpaid", "Settled as not paid"

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="platform_bonuses")
    platform = models.CharField(max_length=10, choices=Platform.choices)
    participant = models.ForeignKey("annotation.Participant", on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=200, blank=True)
    amount_cents = models.PositiveIntegerField()
    state = models.CharField(max_length=10, choices=State.choices, default=State.NEW)
    batch_id = models.CharField(max_length=64, blank=True, help_text="Prolific's bulk bonus id.")
    paying_since = models.DateTimeField(
        null=True, blank=True, help_text="When its pay call (CREATING: its create call) went out."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    paid_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "platform", "participant", "reason"], name="platformbonus_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.amount_cents} cents to {self.participant_id} for {self.reason!r} ({self.state})"


class ResearcherToken(models.Model):
    """A researcher's own platform token, encrypted (``platforms.tokens``); never
    shown again, never exported, never in an API answer."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    platform = models.CharField(max_length=10, choices=Platform.choices)
    encrypted = models.BinaryField(editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "platform"], name="researchertoken_once")]

    def __str__(self) -> str:
        return f"{self.platform} token of user {self.user_id}"


class PlatformEvent(models.Model):
    """An event a platform sent us (a webhook) for a study, kept by its id so that a second
    delivery of the same event to the same study does nothing (``platforms.events``), with
    the submission's status and the time the platform sent it, so that an older event
    arriving after a newer one is recognised. What each event did is written in the audit
    log (``PlatformCall``)."""

    platform = models.CharField(max_length=10, choices=Platform.choices)
    event_id = models.CharField(
        max_length=100, help_text="The platform's id of the event (Prolific: X-Event-ID)."
    )
    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="+")
    submission_id = models.CharField(max_length=64, blank=True)
    status = models.CharField(
        max_length=40, blank=True, help_text="The submission's status the event announced."
    )
    sent_at = models.DateTimeField(null=True, blank=True, help_text="When the platform sent it, as it says.")
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "platform", "event_id"], name="platformevent_once")
        ]
        indexes = [models.Index(fields=["study", "submission_id"], name="platformevent_submission")]

    def __str__(self) -> str:
        return f"{self.platform} event {self.event_id}"
