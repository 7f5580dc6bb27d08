from __future__ import annotations

from django.conf import settings
from django.db import models


class JudgeEndpoint(models.Model):
    """A researcher's API key for an OpenAI-compatible endpoint (a hosted API, vLLM, Ollama),
    encrypted like a platform token (``platforms.tokens.seal``); never shown again, never
    exported, never in an API answer. A judge job names the base URL; the key is found here
    under the job's owner."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    base_url = models.CharField(max_length=500)
    encrypted = models.BinaryField(editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "base_url"], name="judgeendpoint_once")]

    def __str__(self) -> str:
        return f"endpoint {self.base_url} of user {self.user_id}"


class JudgeExchange(models.Model):
    """One chat-completions request a judge sent and the reply it got, kept byte for byte.

    ``key`` is the SHA-256 of the base URL and the canonical request body, so the same
    request is never sent twice: a rerun (another study with the same pages, answers
    deleted and asked again) reads the reply from here. Only replies that were answers
    (status 200, JSON with a message) are kept; a failed call is tried again next time."""

    key = models.CharField(max_length=64, unique=True)
    base_url = models.CharField(max_length=500)
    request = models.JSONField(help_text="The request body as sent (never the key).")
    reply = models.TextField(help_text="The reply's body, as received.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"exchange {self.key[:12]}"
