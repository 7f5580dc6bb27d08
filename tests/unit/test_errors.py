import pytest
from rest_framework import serializers

from annotation.errors import InputError, checked, flatten_errors


def test_flatten_nested_detail_names_every_path():
    detail = {
        "items": [{}, {"payload": {"sentences": ["Too short."]}}],
        "non_field_errors": ["Bad file."],
        "config": {"questions": [{"id": ["Required."]}]},
    }
    assert flatten_errors(detail) == {
        "items[1].payload.sentences": ["Too short."],
        "answer": ["Bad file."],
        "config.questions[0].id": ["Required."],
    }


def test_flatten_with_prefix():
    assert flatten_errors({"label": ["Bad."]}, "answer") == {"answer.label": ["Bad."]}
    assert flatten_errors({"non_field_errors": ["Bad."]}, "gold") == {"gold": ["Bad."]}


class _Limit(serializers.Serializer):
    limit = serializers.IntegerField(min_value=1)

    def validate_limit(self, value):
        most = self.context.get("most", 100)
        if value > most:
            raise serializers.ValidationError(f"At most {most}.")
        return value


def test_checked_returns_the_validated_values_as_a_dict():
    assert checked(_Limit, {"limit": "5"}) == {"limit": 5}
    assert type(checked(_Limit, {"limit": "5"})) is dict


def test_checked_names_the_field_under_its_place():
    with pytest.raises(InputError) as caught:
        checked(_Limit, {"limit": 0}, place="parameters")
    assert list(caught.value.errors) == ["parameters.limit"]
    with pytest.raises(InputError) as caught:
        checked(_Limit, {})
    assert caught.value.errors == {"limit": ["This field is required."]}


def test_checked_passes_the_serializer_its_context():
    with pytest.raises(InputError) as caught:
        checked(_Limit, {"limit": 7}, context={"most": 5})
    assert caught.value.errors == {"limit": ["At most 5."]}
