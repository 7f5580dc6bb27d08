"""Items as researchers see them: payload, gold and provenance included."""

from __future__ import annotations

from rest_framework import serializers

from annotation.models import Item


class ItemOut(serializers.ModelSerializer):
    answered = serializers.IntegerField(source="n_answered")

    class Meta:
        model = Item
        fields = [
            "id", "external_id", "payload", "is_attention_check", "gold", "provenance", "slots_taken",
            "answered", "created_at",
        ]  # fmt: skip


class ItemFilter(serializers.Serializer):
    attention_check = serializers.BooleanField(required=False, allow_null=True, default=None)
    system = serializers.CharField(required=False, help_text="provenance.system equals this")
    source_id = serializers.CharField(required=False, help_text="provenance.source_id equals this")
    external_id = serializers.CharField(required=False)
    complete = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="has all its wanted answers"
    )


class UploadResult(serializers.Serializer):
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
