"""A judge behind an OpenAI-compatible chat-completions endpoint (a hosted API, vLLM, Ollama).

The same prompts as the local LLM rater (``llm.prompt_item``: what a participant sees, the
same few-shot examples) and the same parsing of a reply (``prompts.reply_answer``); only the
backend differs. Each closed question is asked ``samples`` times (a seed per sample, sent
where the endpoint honours it); an item whose page compares a pair (``TaskKind.swapped_state``)
is asked again with the two sides exchanged, and the answers of the second order are read
back into the first order's letters through the kind (``answer_from_model`` then
``model_choices``). Each question's answer is the option with the most votes over both orders
(equal votes: a tie where the question has one, else the first option in the question's
order), its vote share the judge's confidence; whether each order's own majority agreed is
kept per question (``swap``). A call that fails after its retries, or a refusal, leaves the
item unanswered and recorded as failed (``ModelAnswer.failed``): never an answer, asked
again on a rerun.

The transport is urllib3's: its ``Retry`` backs off on 429, 5xx and timeouts and honours a
reply's Retry-After (capped), its ``Timeout`` bounds each try. Every answered request is
kept with its raw reply (``services.analysis.judges.keep_exchange``) and read from there
before anything is sent, so a rerun sends nothing and stores the same answers.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import urllib3
from django.conf import settings
from django.utils import timezone
from urllib3.util.retry import Retry

from annotation.errors import InputError
from annotation.job_parameters import JudgeParameters
from annotation.kinds.base import ModelQuestion, TaskKind
from annotation.kinds.questions import TIE
from annotation.models import Item, Study
from annotation.services.analysis.judges import (
    TokenEstimate,
    cached_reply,
    estimate_tokens,
    exchange_key,
    keep_exchange,
    self_preference_warning,
    swap_consistency,
)
from annotation.services.analysis.model_answers import (
    HumanExample,
    ModelAnswer,
    forget_failed_calls,
    human_examples,
    items_for_model,
    model_participant,
)
from annotation.services.jobs import Progress, no_progress

from .llm import ITEMS_PER_STEP, Prompted, prompt_item
from .prompts import PROMPT_VERSION, prompt_template, reply_answer
from .run import answer_as_model

RETRIED_STATUSES = (429, 500, 502, 503, 504)


class CallFailed(Exception):
    """No answer came from the endpoint: the status or error after the retries, or a refusal."""


def sample_seed(seed: int, sample: int) -> int:
    """The seed sent with sample ``sample`` of a rater seeded ``seed`` (31 bits: every server takes it)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{sample}".encode()).digest()[:4], "big") >> 1


def request_body(parameters: JudgeParameters, prompt: str, sample: int) -> dict:
    """One chat-completions request: the rater's prompt as the user's message."""
    return {
        "model": parameters.model,
        "messages": [{"role": "user", "content": prompt}],
        "temperature": parameters.temperature,
        "max_tokens": parameters.max_tokens,
        "seed": sample_seed(parameters.seed, sample),
    }


@dataclass(frozen=True)
class Reply:
    """What a reply says: the message's text, the model id and fingerprint the endpoint gave."""

    text: str
    model: str
    fingerprint: str


def read_reply(raw: str) -> Reply:
    """The reply's text, or ``CallFailed`` for malformed JSON, no message, or a refusal."""
    try:
        data = json.loads(raw)
        choice = data["choices"][0]
        message = choice["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        message = None
    if not isinstance(message, dict):
        raise CallFailed(f"malformed reply: {raw[:120]!r}")
    content = message.get("content")
    if (
        choice.get("finish_reason") == "content_filter"
        or message.get("refusal")
        or not isinstance(content, str)
    ):
        raise CallFailed(f"refused by the endpoint: {str(message.get('refusal') or 'no content')[:120]}")
    return Reply(content, str(data.get("model") or ""), str(data.get("system_fingerprint") or ""))


@dataclass
class ChatEndpoint:
    """Calls to one endpoint, through the cache of exchanges; counts what went out."""

    base_url: str
    api_key: str = field(repr=False)
    sent: int = 0  # requests that left (each retry included)
    cached: int = 0  # requests the cache answered
    models: set[str] = field(default_factory=set)
    fingerprints: set[str] = field(default_factory=set)
    pool: urllib3.PoolManager = field(default_factory=urllib3.PoolManager, repr=False)

    def complete(self, body: dict) -> Reply:
        key = exchange_key(self.base_url, body)
        raw = cached_reply(key)
        if raw is not None:
            self.cached += 1
            reply = read_reply(raw)
        else:
            raw = self._send(body)
            reply = read_reply(raw)  # a malformed reply or a refusal is not kept: asked again next time
            keep_exchange(key, base_url=self.base_url, body=body, reply=raw)
        self.models.add(reply.model)
        if reply.fingerprint:
            self.fingerprints.add(reply.fingerprint)
        return reply

    def _send(self, body: dict) -> str:
        retries = settings.JUDGE_RETRIES
        retry = Retry(
            total=retries,
            connect=retries,
            read=retries,
            status=retries,
            other=0,
            redirect=False,
            allowed_methods=None,  # a chat completion changes nothing: POST is retried too
            status_forcelist=RETRIED_STATUSES,
            backoff_factor=settings.JUDGE_BACKOFF_S,
            retry_after_max=settings.JUDGE_RETRY_AFTER_MAX_S,
            raise_on_status=False,
        )
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        timeout = settings.JUDGE_TIMEOUT_S
        try:
            response = self.pool.request(
                "POST",
                f"{self.base_url}/chat/completions",
                body=json.dumps(body).encode(),
                headers=headers,
                retries=retry,
                timeout=urllib3.Timeout(connect=timeout, read=timeout),
            )
        except urllib3.exceptions.HTTPError as exc:
            self.sent += retries + 1
            reason = getattr(exc, "reason", None) or exc
            raise CallFailed(f"no reply after {retries + 1} tries: {type(reason).__name__}") from None
        history = response.retries.history if response.retries is not None else ()
        self.sent += len(history) + 1
        if response.status != 200:
            raise CallFailed(
                f"status {response.status} after {len(history) + 1} tries: "
                f"{response.data[:120].decode('utf-8', 'replace')!r}"
            )
        return response.data.decode("utf-8", "replace")


def judge_definition(parameters: JudgeParameters) -> dict:
    """What the judge is (its model participant): everything that changes its answers."""
    return {
        "kind": "judge",
        "model": parameters.model,
        "version": PROMPT_VERSION,
        "endpoint": parameters.base_url,
        "samples": parameters.samples,
        "temperature": parameters.temperature,
        "seed": parameters.seed,
        "shots": parameters.shots,
        "max_tokens": parameters.max_tokens,
        "swap": parameters.swap,
    }


@dataclass
class EndpointRater:
    """A judge as ``workers.raters.run.answer_as_model`` runs it."""

    definition: dict
    parameters: JudgeParameters
    examples: list[HumanExample]
    endpoint: ChatEndpoint

    def leaves_out(self, study: Study) -> set[str]:
        return set()

    def orders(self, study: Study, item: Item) -> list[Prompted]:
        """The item's prompts on the drawn page, and on the swapped one where it compares a pair."""
        kind, seed, shots = study.task_kind, self.parameters.seed, self.parameters.shots
        first = prompt_item(kind, study, item, self.examples, seed=seed, shots=shots)
        swapped = kind.swapped_state(item, first.state) if self.parameters.swap else None
        if swapped is None:
            return [first]
        return [first, prompt_item(kind, study, item, self.examples, seed=seed, shots=shots, state=swapped)]

    def estimate(self, study: Study, items: Sequence[Item]) -> TokenEstimate:
        """The exact prompts of ``items`` in every order, each sent ``samples`` times."""
        lengths = [
            len(prompt) for item in items for entry in self.orders(study, item) for prompt in entry.prompts
        ]
        return estimate_tokens(
            lengths, items=len(items), samples=self.parameters.samples, max_tokens=self.parameters.max_tokens
        )

    def answer(self, study: Study, items: Sequence[Item]) -> list[ModelAnswer]:
        return [self.judge(study.task_kind, self.orders(study, item)) for item in items]

    def judge(self, kind: TaskKind, orders: Sequence[Prompted]) -> ModelAnswer:
        first = orders[0]
        item, state = first.item, first.state
        votes: list[dict[str, Counter]] = []
        lines: list[str] = []
        seen: set[str] = set()  # the model ids the replies gave
        try:
            for number, entry in enumerate(orders):
                votes.append({})
                for sample in range(self.parameters.samples):
                    chosen = self._ask(entry, sample, lines, number, seen)
                    if number:  # read back into the first order's letters, through the kind
                        back = kind.model_choices(
                            item, state, kind.answer_from_model(item, entry.state, chosen)
                        )
                        chosen = {qid: value for qid, value in back.items() if qid in chosen}
                    for qid, value in chosen.items():
                        votes[number].setdefault(qid, Counter())[value] += 1
        except CallFailed as exc:
            return ModelAnswer(
                item,
                "\n".join(lines),
                None,
                state,
                error=f"call failed: {exc}",
                failed=True,
                details=_details(first),
            )
        return self._verdict(kind, first, votes, "\n".join(lines), seen)

    def _ask(
        self, entry: Prompted, sample: int, lines: list[str], number: int, seen: set[str]
    ) -> dict[str, Any]:
        chosen: dict[str, Any] = {}
        for question, prompt in zip(entry.task.questions, entry.prompts, strict=True):
            reply = self.endpoint.complete(request_body(self.parameters, prompt, sample))
            seen.add(reply.model)
            lines.append(f"order {number + 1} sample {sample + 1} {question.id}: {reply.text.strip()}")
            option = reply_answer(reply.text, question)
            if option is not None:
                chosen[question.id] = option.value
        return chosen

    def _verdict(
        self, kind: TaskKind, first: Prompted, votes: list[dict[str, Counter]], raw: str, seen: set[str]
    ) -> ModelAnswer:
        item, state = first.item, first.state
        total: dict[str, Counter] = {}
        for order in votes:
            for qid, votes_here in order.items():
                total.setdefault(qid, Counter()).update(votes_here)
        chosen, scores, confidence, missing = {}, {}, {}, []
        for question in first.task.questions:
            counter = total.get(question.id)
            if not counter:
                missing.append(question.id)
                continue
            chosen[question.id] = winner(question, counter)
            count = sum(counter.values())
            scores[question.id] = {o.value: counter[o.value] / count for o in question.options}
            confidence[question.id] = round(max(counter.values()) / count, 4)  # a split's tie: the top share
        details = _details(first) | {
            "orders": len(votes),
            "samples": self.parameters.samples,
            "confidence": confidence,
            "votes": {qid: {str(v): n for v, n in counter.items()} for qid, counter in total.items()},
            "models": sorted(seen),
        }
        if len(votes) > 1:
            details["swap"] = {
                qid: _majority(votes[0][qid]) is not None
                and _majority(votes[0][qid]) == _majority(votes[1][qid])
                for qid in votes[0]
                if qid in votes[1]
            }
        if missing:
            error = f"no allowed answer in any reply for {', '.join(missing[:5])}" + (
                " …" if len(missing) > 5 else ""
            )
            return ModelAnswer(item, raw, None, state, error=error, details=details)
        answer = kind.answer_from_model(item, state, chosen, scores)
        return ModelAnswer(item, raw, answer, state, details=details)

    def record(self) -> dict:
        """The reproducibility record of this run (the job's result keeps it)."""
        template = prompt_template()
        return {
            "endpoint": self.parameters.base_url,
            "model": self.parameters.model,
            "models_returned": sorted(self.endpoint.models),
            "system_fingerprints": sorted(self.endpoint.fingerprints),
            "prompt_version": PROMPT_VERSION,
            "prompt_template": template,
            "prompt_template_sha256": hashlib.sha256(template.encode()).hexdigest(),
            "temperature": self.parameters.temperature,
            "samples": self.parameters.samples,
            "seed": self.parameters.seed,
            "seeds_sent": [sample_seed(self.parameters.seed, n) for n in range(self.parameters.samples)],
            "shots": self.parameters.shots,
            "max_tokens": self.parameters.max_tokens,
            "swap": self.parameters.swap,
            "date": timezone.now().isoformat(),
            "requests_sent": self.endpoint.sent,
            "cached_replies": self.endpoint.cached,
        }


def winner(question: ModelQuestion, counter: Counter) -> Any:
    """The option with the most votes; on equal votes a tie where the question offers one,
    else the first of them in the question's order."""
    top = max(counter.values())
    if not question.options:  # an open question: the most frequent reply, the first of equals
        return next(value for value, votes in counter.items() if votes == top)
    best = [o.value for o in question.options if counter[o.value] == top]
    if len(best) > 1 and any(o.value == TIE for o in question.options):
        return TIE
    return best[0]


def _majority(counter: Counter) -> Any:
    """One order's own answer: its most voted option, or None when two share the most votes."""
    ranked = counter.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def _details(entry: Prompted) -> dict:
    return {
        "examples": list(entry.examples),
        "prompt_sha256": [hashlib.sha256(p.encode()).hexdigest()[:16] for p in entry.prompts],
    }


def endpoint_rater(study: Study, parameters: JudgeParameters, *, api_key: str) -> EndpointRater:
    """The judge ``parameters`` describe, for ``study``; ``InputError`` when a language model
    cannot answer the study's kind."""
    kind = study.task_kind
    if not kind.answerable_by_model:
        raise InputError({"study": [f"A language model cannot answer {kind.name} items."]})
    examples = human_examples(study) if parameters.shots else []
    return EndpointRater(
        judge_definition(parameters), parameters, examples, ChatEndpoint(parameters.base_url, api_key)
    )


def judge_study(
    study: Study, parameters: JudgeParameters, *, api_key: str, progress: Progress = no_progress
) -> dict:
    """Judge every item the judge has not answered (failed calls of an earlier run asked
    again), after checking the exact estimate against the cap; the job's result: the counts
    of ``answer_as_model``, the estimate, the record, the swap consistency over all the
    judge's outputs on the study, and the self-preference warning."""
    rater = endpoint_rater(study, parameters, api_key=api_key)
    participant = model_participant(rater.definition)
    retried = forget_failed_calls(study, participant)
    estimate = rater.estimate(study, list(items_for_model(study, participant)))
    estimate.check_cap(parameters.token_cap)
    result = answer_as_model(study, rater, progress=progress, batch=ITEMS_PER_STEP)
    return result.summary() | {
        "retried": retried,
        "estimate": estimate.as_dict(),
        "record": rater.record(),
        "swap_consistency": swap_consistency(study, participant),
        "warning": self_preference_warning(study, parameters.model),
    }
