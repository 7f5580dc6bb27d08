"""Only researchers and admins use the API; participants have their pages and nothing else."""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from annotation.services.access import is_researcher


class IsResearcher(BasePermission):
    message = "The API is for researchers."

    def has_permission(self, request, view) -> bool:
        return is_researcher(request.user)
