"""The browsable API (a logged-in researcher opening an API address in a browser)."""

from __future__ import annotations

from rest_framework.renderers import BrowsableAPIRenderer


class ResearcherBrowsableAPIRenderer(BrowsableAPIRenderer):
    """DRF's HTML view of the API, with the raw JSON form for writes but without the
    generated filter and field forms.

    Those forms ask a view for ``get_queryset()`` and re-run its output serializer outside
    the view; our views have no queryset (each fetches through ``annotation.services.access``
    and filters with a validated query serializer, documented in the schema) and our write
    serializers are not the read ones, so the stock renderer failed with a 500.
    """

    def get_filter_form(self, data, view, request):
        return None

    def get_rendered_html_form(self, data, view, method, request):
        return None
