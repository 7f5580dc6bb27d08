"""The RoFT passage pipeline against a scripted backend (no model needed for these rules)."""

from workers.generation.backend import Continuation
from workers.generation.continuations import (
    CorpusDocument,
    build_passages,
    passes_quality_rules,
    plan_passages,
)

TEXT = " ".join(f"Human sentence number {i} is here." for i in range(12))


class Scripted:
    """Returns a fixed continuation; records what it was asked."""

    name = "scripted"

    def __init__(self, text: str):
        self.text, self.requests = text, []

    def continue_texts(self, requests):
        self.requests.extend(requests)
        return [Continuation(self.text, "scripted", {"top_p": r.p}, r.seed) for r in requests]


MACHINE = " ".join(f"Machine sentence {i} follows on." for i in range(12))


def test_plans_are_seeded_and_within_range():
    docs = [CorpusDocument(f"d{i}", TEXT, "news") for i in range(50)]
    plans = plan_passages(docs, length=10, p_values=[0.0, 0.4, 1.0], seed=3)
    assert plans == plan_passages(docs, length=10, p_values=[0.0, 0.4, 1.0], seed=3)
    assert all(1 <= plan.human <= 10 for plan in plans)
    assert {plan.p for plan in plans} <= {0.0, 0.4, 1.0}
    assert any(plan.human == 10 for plan in plans)  # some all-human passages at the default share


def test_built_item_has_boundary_and_length():
    plan = plan_passages([CorpusDocument("d1", TEXT, "stories")], length=10, all_human_share=0, seed=1)[0]
    backend = Scripted(MACHINE)
    [(_, item)] = list(build_passages([plan], backend, length=10))
    sentences = item["payload"]["sentences"]
    assert len(sentences) == 10 and item["payload"]["boundary"] == plan.human
    assert sentences[plan.human - 1].startswith("Human") and sentences[plan.human].startswith("Machine")
    assert backend.requests[0].prefix.count("Human sentence") == plan.human
    assert item["provenance"]["source_id"] == "d1" and item["payload"]["category"] == "stories"


def test_same_plan_same_id():
    plan = plan_passages([CorpusDocument("d1", TEXT, "news")], all_human_share=0, seed=1)[0]
    first = next(build_passages([plan], Scripted(MACHINE)))[1]
    second = next(build_passages([plan], Scripted(MACHINE)))[1]
    assert first["external_id"] == second["external_id"]


def test_quality_rules():
    good = [f"Sentence {i} is fine." for i in range(10)]
    assert passes_quality_rules(good, 10)
    assert not passes_quality_rules(good[:9], 10)
    assert not passes_quality_rules([*good[:9], "Ok."], 10)
    assert not passes_quality_rules([*good[:8], good[7], good[9]], 10)


def test_short_continuation_is_rejected():
    plan = plan_passages([CorpusDocument("d1", TEXT, "news")], length=10, all_human_share=0, seed=2)[0]
    [(_, item)] = list(build_passages([plan], Scripted("Too short."), length=10))
    assert item is None
