from annotation.errors import flatten_errors


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
