"""Items of a study: list with filters, bulk upload as JSON Lines (streamed, all or nothing)."""

from __future__ import annotations

from django.db.models import Q
from django.urls import reverse
from drf_spectacular.utils import OpenApiTypes
from rest_framework import status
from rest_framework.response import Response

from annotation.api.idempotency import idempotent
from annotation.api.parsers import JSONLinesParser, JSONLParser
from annotation.api.schema import documented
from annotation.api.serializers.items import ItemFilter, ItemOut, UploadResult
from annotation.api.serializers.jobs import JobOut
from annotation.models import Item, Job
from annotation.services.authoring.items_upload import receive_items_upload
from annotation.services.populations import counted_per_item

from .base import ResearcherView


class ItemListView(ResearcherView):
    serializer_class = ItemOut
    parser_classes = [JSONLinesParser, JSONLParser]

    @documented(summary="Items of a study", responses={200: ItemOut(many=True)}, parameters=[ItemFilter])
    def get(self, request, slug):
        study = self.study()
        query = self.query(ItemFilter)
        items = Item.objects.filter(study=study).annotate(n_answered=counted_per_item()).order_by("id")
        if query["attention_check"] is not None:
            items = items.filter(is_attention_check=query["attention_check"])
        if "system" in query:
            items = items.filter(provenance__system=query["system"])
        if "source_id" in query:
            items = items.filter(provenance__source_id=query["source_id"])
        if "external_id" in query:
            items = items.filter(external_id=query["external_id"])
        if query["complete"] is not None:
            complete = Q(n_answered__gte=study.annotations_per_item)
            items = items.filter(complete if query["complete"] else ~complete)
        page = self.paginate_queryset(items)
        return self.get_paginated_response(ItemOut(page, many=True).data)

    @documented(
        summary="Add or update items from JSON Lines (one study-file item per line)",
        description="Send `Content-Type: application/x-ndjson`. The body is read as a stream, at most "
        "API_MAX_UPLOAD_BYTES (413 beyond). Every line is checked by the study's kind; any error "
        "writes nothing and the answer names each `line N: field` (the first 1,000, then a count). "
        "Up to ITEMS_UPLOAD_INLINE_LINES lines (default 20,000) are loaded in the request: 200 with "
        "the counts. A longer body is stored and loaded by an `items_upload` job: 202 with the job "
        "(follow it at `/api/v1/jobs/<id>/`, also in `Location`); once done its `result` has the "
        "counts, and if it failed, its `error` says so and `result.errors` lists the lines' errors.",
        request={"application/x-ndjson": OpenApiTypes.STR, "application/jsonl": OpenApiTypes.STR},
        responses={200: UploadResult, 202: JobOut},
        write=True,
    )
    @idempotent
    def post(self, request, slug):
        study = self.study_to_change()
        # A frozen study takes items only as a deviation, its reason in the query string.
        reason = request.query_params.get("deviation_reason", "")
        outcome = receive_items_upload(study, request.data, user=request.user, reason=reason)
        if isinstance(outcome, Job):
            location = reverse("api:job-detail", kwargs={"job_id": outcome.pk})
            headers = {"Location": location}
            return Response(JobOut(outcome).data, status=status.HTTP_202_ACCEPTED, headers=headers)
        return Response(UploadResult(outcome).data, status=status.HTTP_200_OK)
