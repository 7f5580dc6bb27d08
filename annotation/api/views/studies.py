"""Studies: list, create from a study file, read, update, change status."""

from __future__ import annotations

from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from annotation.api.idempotency import idempotent
from annotation.api.schema import documented
from annotation.api.serializers.studies import (
    Freeze,
    StatusChange,
    StudyDetail,
    StudyFile,
    StudySummary,
    StudyUpdate,
    VersionOut,
)
from annotation.models import Study
from annotation.services.access import require_ability, researcher_studies, status_ability
from annotation.services.authoring.studies import load_study_file_for
from annotation.services.authoring.study_changes import update_study
from annotation.services.authoring.versions import freeze_study
from annotation.services.participation.assignment import item_progress
from annotation.services.populations import counted_per_study, items_per_study
from annotation.services.study_status import change_study_status

from .base import ResearcherView


def _detail(study: Study, status_code: int = status.HTTP_200_OK) -> Response:
    study = (
        Study.objects.select_related("owner").prefetch_related("shared_with", "shares__user").get(pk=study.pk)
    )
    data = StudyDetail(study, context={"progress": item_progress(study)}).data
    return Response(data, status=status_code)


class StudyListView(ResearcherView):
    serializer_class = StudySummary

    @documented(
        summary="Studies you own or that are shared with you (all, for admins)",
        responses={200: StudySummary(many=True)},
    )
    def get(self, request):
        studies = (
            researcher_studies(request.user)
            .select_related("owner")
            # The answers that count (``populations``), as the study's progress counts them:
            # never a test run, a model rater's, an adjudicator's or an attention check.
            .annotate(n_items=items_per_study(), n_responses=counted_per_study())
            .order_by("slug")
        )
        page = self.paginate_queryset(studies)
        return self.get_paginated_response(StudySummary(page, many=True).data)

    @documented(
        summary="Create a study from a study file (docs/formats.md); you become its owner",
        request=StudyFile,
        responses={201: StudyDetail},
        write=True,
    )
    @idempotent
    def post(self, request):
        result = load_study_file_for(request.user, request.data, update_own=False)
        return _detail(result.study, status.HTTP_201_CREATED)


class StudyDetailView(ResearcherView):
    serializer_class = StudyDetail

    @documented(summary="A study with its configuration and progress", responses={200: StudyDetail})
    def get(self, request, slug):
        return _detail(self.study("reach"))

    @documented(
        summary="Change a study's settings or config (config is checked by the kind)",
        request=StudyUpdate,
        responses={200: StudyDetail},
        write=True,
    )
    @idempotent
    def patch(self, request, slug):
        study = self.study_to_change()
        changes = dict(self.body(lambda data: StudyUpdate(study, data=data, partial=True)))
        reason = changes.pop("deviation_reason", "")
        update_study(study, user=request.user, changes=changes, source="api", reason=reason)
        return _detail(study)


class StudyStatusView(ResearcherView):
    serializer_class = StatusChange

    @documented(
        summary="Open (live), close, or reopen a study",
        request=StatusChange,
        responses={200: StudyDetail},
        write=True,
    )
    @idempotent
    def post(self, request, slug):
        study = self.study("reach")  # 404 before the body is read, as for every endpoint
        wanted = self.body(StatusChange)["status"]
        require_ability(request.user, study, status_ability(wanted))  # back to draft: the owners'
        study = change_study_status(study, status=wanted)
        return _detail(study)


class StudyFreezeView(ResearcherView):
    serializer_class = Freeze

    @documented(
        summary="Freeze a draft study's file and analysis plan (later changes are deviations, with a reason)",
        request=Freeze,
        responses={200: StudyDetail},
        write=True,
    )
    @idempotent
    def post(self, request, slug):
        study = self.study_to_change()
        freeze_study(study, user=request.user, plan=self.body(Freeze)["analysis_plan"])
        return _detail(study)


class StudyVersionListView(ResearcherView):
    serializer_class = VersionOut

    @documented(
        summary="A study's versions, newest first, each with its diff", responses={200: VersionOut(many=True)}
    )
    def get(self, request, slug):
        versions = self.study().versions.select_related("author").order_by("-number")
        page = self.paginate_queryset(versions)
        return self.get_paginated_response(VersionOut(page, many=True).data)


class StudyVersionFileView(ResearcherView):
    serializer_class = StudyFile

    @documented(
        summary="The study file of one version of a study (docs/formats.md)", responses={200: StudyFile}
    )
    def get(self, request, slug, number):
        version = self.study().versions.filter(number=number).first()
        if version is None:
            raise NotFound("No such version of this study.")
        return Response(version.study_file)
