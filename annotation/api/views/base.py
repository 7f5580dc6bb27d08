"""What every API view shares: researchers only, bounded JSON bodies, query validation."""

from __future__ import annotations

from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView

from annotation.api.parsers import BoundedJSONParser
from annotation.api.permissions import IsResearcher
from annotation.errors import InputError, checked
from annotation.services.access import access_study_with

# Query parameters every list takes besides its filters: paging, and the browsable API's.
PAGING_PARAMETERS = {"page", "page_size", "cursor", "format"}
EMPTY_FILTER = "Give a value, or leave the parameter out."


class ResearcherView(GenericAPIView):
    permission_classes = [IsResearcher]
    parser_classes = [BoundedJSONParser]
    filter_names: frozenset[str] = frozenset()  # set by ``query`` from its serializer

    def study(self, ability: str = "read"):
        """The study named in the URL, if this researcher reaches it (404 otherwise) and their
        role on it includes ``ability`` (403 otherwise; ``access.ROLE_ABILITIES``)."""
        return access_study_with(self.request.user, self.kwargs["slug"], ability)

    def study_to_change(self):
        """The study named in the URL, if this user may change it (``access.can_change_study``):
        404 where they do not reach it, 403 where their role does not include changes."""
        return self.study("change")

    def query(self, serializer_class) -> dict:
        """Validated query parameters; a bad one is a 400 naming it. So is a filter given
        with an empty value (``?kind=``): DRF would read it as "not given" and answer the
        whole list, which a typo must never get."""
        self.filter_names = frozenset(serializer_class().fields)
        params = self.request.query_params
        empty = {name: [EMPTY_FILTER] for name in sorted(self.filter_names) if "" in params.getlist(name)}
        try:
            values = checked(serializer_class, params)
        except InputError as exc:
            raise InputError({**exc.errors, **empty}) from None
        if empty:
            raise InputError(empty)
        return values

    def paginate_queryset(self, queryset):
        """One page of a list. A query parameter the list does not take is a 400 naming it
        (a typo must not silently return everything); so is a page or cursor that is not
        one (DRF answers those 404)."""
        unknown = sorted(set(self.request.query_params) - PAGING_PARAMETERS - self.filter_names)
        if unknown:
            raise InputError({name: ["Unknown query parameter."] for name in unknown})
        try:
            return super().paginate_queryset(queryset)
        except NotFound as exc:
            name = "cursor" if "cursor" in self.request.query_params else "page"
            raise InputError({name: [str(exc.detail)]}) from None

    def body(self, serializer_class) -> dict:
        return checked(serializer_class, self.request.data)
