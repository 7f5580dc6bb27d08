"""The study link as a researcher pastes it into a crowd platform, and reused codes.

Prolific fills ``{{%PROLIFIC_PID%}}``, ``{{%STUDY_ID%}}`` and ``{{%SESSION_ID%}}`` into the
link it sends; MTurk loads the plain link inside an ExternalQuestion and adds
``assignmentId``, ``hitId``, ``workerId`` and ``turkSubmitTo`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.urls import reverse

from annotation.models import Study
from annotation.services.access import researcher_studies

PROLIFIC_QUERY = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
MTURK_SCHEMA = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"
)


@dataclass(frozen=True)
class ParticipantLinks:
    plain: str
    prolific: str
    mturk_external_question: str


def site_study_url(study: Study) -> str:
    """The study's link at the site's public address (``SITE_URL``): what a publish sends
    participants to, from the page and from the ``prolific`` / ``mturk`` commands alike,
    wherever the page itself was opened from (a tunnel, an internal name; U3)."""
    return settings.SITE_URL + reverse("study-entry", kwargs={"slug": study.slug})


def site_hook_url(study: Study) -> str:
    """The study's Prolific webhook address at the site's public address (``SITE_URL``)."""
    return settings.SITE_URL + reverse("prolific-hook", kwargs={"slug": study.slug})


def participant_links(study_url: str) -> ParticipantLinks:
    """The links for ``study_url`` (the absolute ``/s/<slug>/`` address)."""
    question = (
        f'<ExternalQuestion xmlns="{MTURK_SCHEMA}">\n'
        f"  <ExternalURL>{study_url}</ExternalURL>\n"
        "  <FrameHeight>0</FrameHeight>\n"
        "</ExternalQuestion>"
    )
    return ParticipantLinks(
        plain=study_url, prolific=f"{study_url}?{PROLIFIC_QUERY}", mturk_external_question=question
    )


@dataclass(frozen=True)
class SharedCode:
    """Other studies with this study's completion code: the ones the researcher reaches by
    slug, the rest only counted (another researcher's slugs stay private)."""

    visible_slugs: list[str]
    hidden_count: int

    def __bool__(self) -> bool:
        return bool(self.visible_slugs or self.hidden_count)


def studies_sharing_completion_code(study: Study, user) -> SharedCode:
    """A code shared between studies lets a participant of one claim payment for the other."""
    if not study.completion_code:
        return SharedCode([], 0)
    others = Study.objects.filter(completion_code=study.completion_code).exclude(pk=study.pk)
    visible = sorted(
        researcher_studies(user).filter(pk__in=others.values("pk")).values_list("slug", flat=True)
    )
    return SharedCode(visible, others.count() - len(visible))
