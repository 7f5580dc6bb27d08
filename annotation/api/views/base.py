"""What every API view shares: researchers only, bounded JSON bodies, query validation."""

from __future__ import annotations

from rest_framework.generics import GenericAPIView

from annotation.api.parsers import BoundedJSONParser
from annotation.api.permissions import IsResearcher
from annotation.errors import InputError, flatten_errors
from annotation.services.access import access_study_for_researcher


class ResearcherView(GenericAPIView):
    permission_classes = [IsResearcher]
    parser_classes = [BoundedJSONParser]

    def study(self):
        """The study named in the URL, if this researcher reaches it (404 otherwise)."""
        return access_study_for_researcher(self.request.user, self.kwargs["slug"])

    def query(self, serializer_class) -> dict:
        """Validated query parameters; a bad one is a 400 naming it."""
        serializer = serializer_class(data=self.request.query_params)
        if not serializer.is_valid():
            raise InputError(flatten_errors(serializer.errors))
        return serializer.validated_data

    def body(self, serializer_class) -> dict:
        serializer = serializer_class(data=self.request.data)
        if not serializer.is_valid():
            raise InputError(flatten_errors(serializer.errors))
        return serializer.validated_data
