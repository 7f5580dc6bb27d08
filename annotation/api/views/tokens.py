"""A researcher exchanges their username and password for an API token."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import FormParser
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from annotation.api.parsers import BoundedJSONParser
from annotation.api.schema import FIELD_ERRORS, documented
from annotation.services.access import is_researcher

from .base import ResearcherView


class TokenOut(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")


class TokenView(ResearcherView):
    permission_classes = [AllowAny]
    authentication_classes: list = []
    parser_classes = [BoundedJSONParser, FormParser]
    serializer_class = AuthTokenSerializer

    @documented(
        summary="Get your API token (researchers and admins only)",
        request=AuthTokenSerializer,
        responses={200: TokenOut, 400: FIELD_ERRORS},
        auth=[],
    )
    def post(self, request):
        credentials = AuthTokenSerializer(data=request.data, context={"request": request})
        credentials.is_valid(raise_exception=True)
        user = credentials.validated_data["user"]
        if not is_researcher(user):
            raise PermissionDenied("The API is for researchers.")
        token, _ = Token.objects.get_or_create(user=user)
        return Response(TokenOut({"token": token.key}).data)
