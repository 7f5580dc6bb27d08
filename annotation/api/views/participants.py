"""Participants of a study: quality figures, marks (flag / block / exclude), returns."""

from __future__ import annotations

from rest_framework.response import Response

from annotation.api.idempotency import idempotent
from annotation.api.schema import documented
from annotation.api.serializers.participants import (
    ErasureIn,
    ErasureOut,
    ParticipantDetailOut,
    ParticipantMarks,
    ParticipantOut,
    ParticipantSort,
    ReturnedIn,
    ReturnedOut,
)
from annotation.models import Erasure
from annotation.services.access import access_enrollment_for_researcher
from annotation.services.analysis.competence import sorted_enrollments, study_competence
from annotation.services.analysis.quality import participant_pages, study_quality
from annotation.services.authoring.erasure import erase_from_study
from annotation.services.participation.exits import mark_returned
from annotation.services.participation.flags import set_study_marks
from annotation.services.populations import real_enrollments

from .base import ResearcherView


class ParticipantListView(ResearcherView):
    serializer_class = ParticipantOut

    @documented(
        summary="Participants of a study with their quality figures",
        responses={200: ParticipantOut(many=True)},
        parameters=[ParticipantSort],
    )
    def get(self, request, slug):
        study = self.study()
        sort = self.query(ParticipantSort).get("sort")
        enrollments = real_enrollments(study).select_related("participant", "study").order_by("id")
        competence = study_competence(study)
        page = self.paginate_queryset(sorted_enrollments(study, enrollments, competence, sort))
        quality = study_quality(study, page)
        rows = [quality[enrollment.participant_id] for enrollment in page]
        context = {"request": request, "competence": competence}
        return self.get_paginated_response(ParticipantOut(rows, many=True, context=context).data)


class ParticipantDetailView(ResearcherView):
    serializer_class = ParticipantDetailOut

    def _answer(self, request, study, enrollment) -> Response:
        quality = study_quality(study, [enrollment])[enrollment.participant_id]
        quality.pages = participant_pages(study, enrollment)
        context = {"request": request, "competence": study_competence(study)}
        return Response(ParticipantDetailOut(quality, context=context).data)

    @documented(
        summary="One participant: every page, timings, attention checks, agreement",
        responses={200: ParticipantDetailOut},
    )
    def get(self, request, slug, public_id):
        study = self.study()
        return self._answer(request, study, access_enrollment_for_researcher(request.user, study, public_id))

    @documented(
        summary="Flag in this study or exclude from its counts and reports (data is kept)",
        request=ParticipantMarks,
        responses={200: ParticipantDetailOut},
        write=True,
    )
    @idempotent
    def patch(self, request, slug, public_id):
        study = self.study("crowd")  # flags, exclusions, blocks: the crowd side (operators too)
        enrollment = access_enrollment_for_researcher(request.user, study, public_id)
        enrollment = set_study_marks(enrollment, changes=self.body(ParticipantMarks), by=request.user)
        return self._answer(request, study, enrollment)


class ErasureView(ResearcherView):
    serializer_class = ErasureIn

    @documented(
        summary="Erase the participant's data from this study (answers, pages, marks, exam attempts)",
        request=ErasureIn,
        responses={200: ErasureOut},
        write=True,
    )
    @idempotent
    def post(self, request, slug, public_id):
        study = self.study_to_change()
        enrollment = access_enrollment_for_researcher(request.user, study, public_id)
        self.body(ErasureIn)
        result = erase_from_study(request.user, enrollment, how=Erasure.How.API)
        return Response(ErasureOut(result).data)


class ReturnedView(ResearcherView):
    serializer_class = ReturnedIn

    @documented(
        summary="Participants who returned or timed out on the platform: release their pages",
        request=ReturnedIn,
        responses={200: ReturnedOut},
        write=True,
    )
    @idempotent
    def post(self, request, slug):
        result = mark_returned(self.study("crowd"), participants=self.body(ReturnedIn)["participants"])
        return Response(ReturnedOut(result).data)
