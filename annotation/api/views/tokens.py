"""A researcher exchanges their username and password for an API token."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

from annotation.api.parsers import BoundedJSONParser
from annotation.api.schema import FIELD_ERRORS, THROTTLED, documented
from annotation.services.access import is_researcher
from annotation.services.web.ratelimit import TokenThrottle

from .base import ResearcherView


def _credentials_given(data) -> bool:
    """Both fields sent as text (a body that is not an object sends neither)."""
    if not hasattr(data, "get"):
        return False
    return all(isinstance(data.get(name), str) and data.get(name) for name in ("username", "password"))


class TokenOut(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Token <token>`.")


REFUSED = "Unable to log in with these credentials, or this account has no API access."


class TokenView(ResearcherView):
    """Every failed attempt gets the same answer: a wrong password and a right password of
    an account without API access cannot be told apart. Limited per client address."""

    permission_classes = [AllowAny]
    throttle_classes = [TokenThrottle]
    authentication_classes: list = []
    parser_classes = [BoundedJSONParser, FormParser]
    serializer_class = AuthTokenSerializer

    @documented(
        summary="Get your API token (researchers and admins only)",
        request=AuthTokenSerializer,
        responses={200: TokenOut, 400: FIELD_ERRORS, 429: THROTTLED},
        auth=[],
    )
    def post(self, request):
        credentials = AuthTokenSerializer(data=request.data, context={"request": request})
        valid = credentials.is_valid()
        if not valid and not _credentials_given(request.data):
            raise ValidationError(credentials.errors)  # a field left out: say which
        if not valid or not is_researcher(credentials.validated_data["user"]):
            raise ValidationError({"non_field_errors": [REFUSED]})
        user = credentials.validated_data["user"]
        token, _ = Token.objects.get_or_create(user=user)
        return Response(TokenOut({"token": token.key}).data)
