"""Study items from edited-model passages, one builder per study kind (plain Python).

A case is one edit request with the passages every system wrote for it: per method a
main passage (about the subject) and, when the request names a coupled entity, a related
passage; people's passages from the request join as system ``human``. The builders follow
the shared payload contracts:

- ``likert``: per system, ``{new_fact, old_facts, main_passage, related_passage?, related_entity?}``;
- ``ranking``: per case, ``{fact, passages: [{system, text}]}`` with every system's main passage;
- ``claim``: per system and passage, one item per claim — the new fact, the old fact and each
  ground-truth statement — ``{claim, sentences, claim_type}``.

Ids are derived from the case, the model, the system and the claim, so a rerun adds
nothing twice; ``provenance.source_id`` is the case id (it pairs the systems' items).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annotation.text import split_sentences

from .requests import EditRequest

HUMAN = "human"
MAIN, RELATED = "main", "related"


@dataclass(frozen=True)
class Passage:
    system: str  # what wrote it: ROME, MEMIT, FT_L, IKE, the unedited model's name, human
    method: str  # none, ike, ft, rome, memit, human
    role: str  # main (about the subject) or related (about the coupled entity)
    text: str
    provenance: dict = field(default_factory=dict)  # model, decoding, seed, edit details…


@dataclass(frozen=True)
class Case:
    request: EditRequest
    model_tag: str  # short model label used in ids
    passages: tuple[Passage, ...]

    def systems(self) -> list[str]:
        """The methods' keys in the order their passages came, ``human`` last."""
        keys: list[str] = []
        for passage in self.passages:
            if passage.method not in keys:
                keys.append(passage.method)
        return sorted(keys, key=lambda key: key == HUMAN)

    def passage(self, method: str, role: str) -> Passage | None:
        return next((p for p in self.passages if p.method == method and p.role == role), None)


def claims(request: EditRequest) -> list[tuple[str, str]]:
    """(claim_type + index, claim): the new fact, the old fact, then every ground-truth statement."""
    found = [("new_fact", request.new_fact), ("old_fact", request.old_fact)]
    found += [(f"ground_truth{index}", fact) for index, fact in enumerate(request.ground_truth)]
    return found


def item_prefix(case_id: str, method: str, model_tag: str) -> str:
    """Human passages do not depend on the model; every other system's do."""
    return f"{case_id}:{HUMAN}" if method == HUMAN else f"{case_id}:{model_tag}:{method}"


# --- ids (known before anything is generated: a rerun skips what is there) ------------------


def likert_ids(request: EditRequest, method: str, model_tag: str) -> list[str]:
    return [f"{item_prefix(request.case_id, method, model_tag)}:likert"]


def ranking_ids(request: EditRequest, methods: list[str], model_tag: str) -> list[str]:
    return [f"{request.case_id}:{model_tag}:ranking:{'+'.join(methods)}"]


def claim_ids(request: EditRequest, method: str, model_tag: str) -> list[str]:
    roles = [MAIN, RELATED] if request.related_prompt else [MAIN]
    if method == HUMAN:
        roles = [r for r in roles if (request.human_main if r == MAIN else request.human_related)]
    prefix = item_prefix(request.case_id, method, model_tag)
    return [f"{prefix}:{role}:{claim_id}" for role in roles for claim_id, _ in claims(request)]


# --- builders -----------------------------------------------------------------------------


def likert_items(case: Case) -> list[dict]:
    request = case.request
    items = []
    for method in case.systems():
        main, related = case.passage(method, MAIN), case.passage(method, RELATED)
        if main is None:
            continue
        payload: dict[str, object] = {
            "new_fact": request.new_fact,
            "old_facts": [request.old_fact, *request.ground_truth],
            "main_passage": main.text,
        }
        if related is not None:
            payload["related_passage"] = related.text
            payload["related_entity"] = request.related_entity
        [external_id] = likert_ids(request, method, case.model_tag)
        items.append(
            {"external_id": external_id, "payload": payload, "provenance": _provenance(main, request)}
        )
    return items


def ranking_items(case: Case) -> list[dict]:
    request = case.request
    mains = [p for method in case.systems() if (p := case.passage(method, MAIN)) is not None]
    if not mains:
        return []
    [external_id] = ranking_ids(request, [p.method for p in mains], case.model_tag)
    return [
        {
            "external_id": external_id,
            "payload": {
                "fact": request.new_fact,
                "passages": [{"system": p.system, "text": p.text} for p in mains],
            },
            "provenance": {
                "systems": [p.system for p in mains],
                "source_id": request.case_id,
                "passages": {p.system: _provenance(p, request) for p in mains},
            },
        }
    ]


def claim_items(case: Case) -> list[dict]:
    request = case.request
    items = []
    for method in case.systems():
        prefix = item_prefix(request.case_id, method, case.model_tag)
        for role in (MAIN, RELATED):
            passage = case.passage(method, role)
            if passage is None:
                continue
            sentences = split_sentences(passage.text) or [passage.text]
            for claim_id, claim in claims(request):
                items.append(
                    {
                        "external_id": f"{prefix}:{role}:{claim_id}",
                        "payload": {
                            "claim": claim,
                            "sentences": sentences,
                            "claim_type": claim_id.rstrip("0123456789"),
                        },
                        "provenance": {**_provenance(passage, request), "claim": claim_id},
                    }
                )
    return items


ITEM_BUILDERS = {"likert": likert_items, "ranking": ranking_items, "claim": claim_items}


def planned_ids(kind: str, request: EditRequest, methods: list[str], model_tag: str) -> dict[str, set[str]]:
    """Per method, the ids of the items its passages end up in (a ranking item needs them all)."""
    if kind not in ITEM_BUILDERS:
        raise ValueError(f"Edited passages make {', '.join(ITEM_BUILDERS)} items, not {kind!r}.")
    return _PLANNED_IDS[kind](request, methods, model_tag)


def _ranking_plan(request: EditRequest, methods: list[str], model_tag: str) -> dict[str, set[str]]:
    systems = [*methods, HUMAN] if request.human_main else list(methods)
    shared = set(ranking_ids(request, systems, model_tag))
    return {method: shared for method in methods}


_PLANNED_IDS = {
    "likert": lambda request, methods, tag: {m: set(likert_ids(request, m, tag)) for m in methods},
    "ranking": _ranking_plan,
    "claim": lambda request, methods, tag: {m: set(claim_ids(request, m, tag)) for m in methods},
}


def _provenance(passage: Passage, request: EditRequest) -> dict:
    return {
        "system": passage.system,
        "method": passage.method,
        "source_id": request.case_id,
        "passage": passage.role,
        **passage.provenance,
    }


def human_passages(request: EditRequest) -> list[Passage]:
    """The request's own passages, written by people as if the edit were true."""
    found = []
    for role, text in ((MAIN, request.human_main), (RELATED, request.human_related)):
        if text and text.strip():
            found.append(Passage(HUMAN, HUMAN, role, text.strip(), {"model": None}))
    return found
