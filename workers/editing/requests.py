"""Edit requests: CounterFact records, plus what the long-form passages need.

Plain Python (no torch): the commands check a requests file before loading any model.
A record is a CounterFact case::

    {"case_id": 7, "requested_rewrite": {"prompt": "{} is located in", "subject": "…",
     "target_new": {"str": "Rome"}, "target_true": {"str": "Paris"}},
     "paraphrase_prompts": [...], "neighborhood_prompts": [...], "generation_prompts": [...]}

and, for ``edit_and_generate``, optionally ``related`` ({"entity", "prompt"}: the coupled
entity and the prompt of its passage), ``main_prompt`` (else the first generation
prompt), ``ground_truth`` (statements that stay true after the edit) and ``human``
({"main", "related"}: passages people wrote as if the edit were true). Other CounterFact
fields are ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rest_framework import serializers

from annotation.errors import InputError, checked
from annotation.services.authoring.input_rows import read_jsonl_file

SUBJECT_SLOT = "{}"


class _Target(serializers.Serializer):
    str = serializers.CharField(trim_whitespace=True, max_length=200)


class _Rewrite(serializers.Serializer):
    prompt = serializers.CharField(trim_whitespace=False, max_length=500)
    subject = serializers.CharField(trim_whitespace=True, max_length=200)
    target_new = _Target()
    target_true = _Target()

    def validate_prompt(self, value: str) -> str:
        if value.count(SUBJECT_SLOT) != 1:
            raise serializers.ValidationError("The prompt needs exactly one '{}' where the subject goes.")
        return value.strip()

    def validate(self, data: dict) -> dict:
        if data["target_new"]["str"] == data["target_true"]["str"]:
            raise serializers.ValidationError({"target_new": ["The new target equals the true one."]})
        return data


class _Related(serializers.Serializer):
    entity = serializers.CharField(max_length=200)
    prompt = serializers.CharField(max_length=2000)


class _Human(serializers.Serializer):
    main = serializers.CharField(required=False, max_length=20000)
    related = serializers.CharField(required=False, max_length=20000)


def _prompts() -> serializers.ListField:
    return serializers.ListField(child=serializers.CharField(max_length=2000), required=False, default=list)


class EditRecord(serializers.Serializer):
    case_id = serializers.CharField(max_length=80)
    requested_rewrite = _Rewrite()
    paraphrase_prompts = _prompts()
    neighborhood_prompts = _prompts()
    generation_prompts = _prompts()
    main_prompt = serializers.CharField(required=False, max_length=2000)
    related = _Related(required=False)
    ground_truth = serializers.ListField(
        child=serializers.CharField(max_length=1000), required=False, default=list
    )
    human = _Human(required=False)

    def to_internal_value(self, data):
        if isinstance(data, dict) and isinstance(data.get("case_id"), int):
            data = {**data, "case_id": str(data["case_id"])}
        return super().to_internal_value(data)


@dataclass(frozen=True)
class EditRequest:
    """One fact to rewrite: in ``prompt``, the subject's true target becomes the new one."""

    case_id: str
    prompt: str  # with "{}" where the subject goes
    subject: str
    target_new: str
    target_true: str
    paraphrase_prompts: tuple[str, ...] = ()
    neighborhood_prompts: tuple[str, ...] = ()
    generation_prompts: tuple[str, ...] = ()
    main_prompt: str | None = None
    related_entity: str | None = None
    related_prompt: str | None = None
    ground_truth: tuple[str, ...] = ()
    human_main: str | None = None
    human_related: str | None = None

    @property
    def filled_prompt(self) -> str:
        """The prompt with the subject in place: what the new target should follow."""
        return self.prompt.replace(SUBJECT_SLOT, self.subject, 1)

    @property
    def subject_end(self) -> int:
        """Character offset in ``filled_prompt`` just after the subject."""
        return self.prompt.index(SUBJECT_SLOT) + len(self.subject)

    @property
    def new_fact(self) -> str:
        return _sentence(f"{self.filled_prompt} {self.target_new}")

    @property
    def old_fact(self) -> str:
        return _sentence(f"{self.filled_prompt} {self.target_true}")

    @property
    def main_passage_prompt(self) -> str:
        """What the main passage continues: ``main_prompt``, else the first generation prompt."""
        if self.main_prompt:
            return self.main_prompt
        return self.generation_prompts[0] if self.generation_prompts else self.filled_prompt

    def as_record(self) -> dict:
        """Back to a CounterFact-shaped record (saved next to an edited model)."""
        record = {
            "case_id": self.case_id,
            "requested_rewrite": {
                "prompt": self.prompt,
                "subject": self.subject,
                "target_new": {"str": self.target_new},
                "target_true": {"str": self.target_true},
            },
            "paraphrase_prompts": list(self.paraphrase_prompts),
            "neighborhood_prompts": list(self.neighborhood_prompts),
            "generation_prompts": list(self.generation_prompts),
            "ground_truth": list(self.ground_truth),
        }
        if self.main_prompt:
            record["main_prompt"] = self.main_prompt
        if self.related_entity:
            record["related"] = {"entity": self.related_entity, "prompt": self.related_prompt}
        return record


def parse_edit_request(data) -> EditRequest:
    """A validated request; ``InputError`` naming the field otherwise."""
    if not isinstance(data, dict):
        raise InputError({"request": ["An edit request is a JSON object."]})
    value = checked(EditRecord, data)
    rewrite, related, human = value["requested_rewrite"], value.get("related") or {}, value.get("human") or {}
    return EditRequest(
        case_id=value["case_id"],
        prompt=rewrite["prompt"],
        subject=rewrite["subject"],
        target_new=rewrite["target_new"]["str"],
        target_true=rewrite["target_true"]["str"],
        paraphrase_prompts=tuple(value["paraphrase_prompts"]),
        neighborhood_prompts=tuple(value["neighborhood_prompts"]),
        generation_prompts=tuple(value["generation_prompts"]),
        main_prompt=value.get("main_prompt"),
        related_entity=related.get("entity"),
        related_prompt=related.get("prompt"),
        ground_truth=tuple(value["ground_truth"]),
        human_main=human.get("main"),
        human_related=human.get("related"),
    )


def read_edit_request(path: str | Path) -> EditRequest:
    """One request from a JSON file (``edit_model``)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError({"request": [f"{path}: no such file."]}) from None
    except json.JSONDecodeError as exc:
        raise InputError({"request": [f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})."]}) from None
    return parse_edit_request(data)


def read_edit_requests(path: str | Path, *, parameter: str = "requests") -> list[EditRequest]:
    """Every line of a JSONL file; any bad line rejects the file, naming line and field
    (errors about the file itself name ``parameter``, the option that gave its path)."""
    return read_jsonl_file(
        path,
        parse_edit_request,
        parameter=parameter,
        what="edit requests",
        id_field="case_id",
        unique_by=lambda request: request.case_id,
    )


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."
