"""Judges behind OpenAI-compatible endpoints: what the site keeps for them and reads of them.

The workers call the endpoint (``workers.raters.endpoint``); this room keeps what both
sides need: the researcher's API key per base URL (sealed like a platform token, read
back only to make a call), the cache of raw exchanges (one row per request body, so a rerun
sends nothing), the token estimate a job is held to before anything is sent, the
self-preference warning, and the swap-consistency rate read from the stored outputs.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath

from rest_framework import serializers

from annotation.errors import InputError
from annotation.job_parameters import JudgeParameters, judge_base_url
from annotation.models import Item, JudgeEndpoint, JudgeExchange, ModelOutput, Participant, Study
from annotation.platforms.tokens import seal, unseal

CHARS_PER_TOKEN = 4  # the usual rule of thumb for English under BPE tokenizers: an estimate, said so
PROMPT_OVERHEAD_CHARS = 400  # the preamble, the labels and the answer cue around a page (the web's estimate)
ESTIMATE_SAMPLE = 500  # the web's estimate reads this many items and scales to the rest


# --- the researcher's key per endpoint ---------------------------------------------------


def store_endpoint_key(user, *, base_url: str, key: str) -> str:
    """Keep ``key`` for ``user``'s endpoint at ``base_url`` (an empty key deletes it); the
    base URL as stored. ``InputError`` naming the field on a bad URL or key."""
    try:
        base_url = judge_base_url(base_url)
    except serializers.ValidationError as exc:
        raise InputError({"base_url": [str(message) for message in exc.detail]}) from None
    key = key.strip()
    if not key:
        JudgeEndpoint.objects.filter(user=user, base_url=base_url).delete()
        return base_url
    if len(key) > 500 or any(ch.isspace() for ch in key):
        raise InputError({"api_key": ["A key is one word of at most 500 characters."]})
    JudgeEndpoint.objects.update_or_create(user=user, base_url=base_url, defaults={"encrypted": seal(key)})
    return base_url


def endpoint_key(user, *, base_url: str) -> str:
    """The key ``user`` stored for ``base_url``, or "" (none: a local vLLM or Ollama needs none)."""
    if user is None:
        return ""
    row = JudgeEndpoint.objects.filter(user=user, base_url=base_url.rstrip("/")).first()
    return unseal(row.encrypted) if row is not None else ""


def stored_endpoints(user) -> list[str]:
    """The base URLs ``user`` has a key for (never the keys)."""
    return list(
        JudgeEndpoint.objects.filter(user=user).order_by("base_url").values_list("base_url", flat=True)
    )


# --- the cache of raw exchanges ------------------------------------------------------------


def exchange_key(base_url: str, body: dict) -> str:
    """The cache key of a request: the base URL and the body, canonical JSON (never the key)."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{base_url}\n{canonical}".encode()).hexdigest()


def cached_reply(key: str) -> str | None:
    return JudgeExchange.objects.filter(key=key).values_list("reply", flat=True).first()


def keep_exchange(key: str, *, base_url: str, body: dict, reply: str) -> None:
    """Keep an answered request (the first reply kept wins: a rerun reads that one)."""
    JudgeExchange.objects.get_or_create(
        key=key, defaults={"base_url": base_url, "request": body, "reply": reply}
    )


# --- cost before a job starts --------------------------------------------------------------


@dataclass(frozen=True)
class TokenEstimate:
    """What a judge run would send: calls (items × orders × questions × samples) and tokens
    (each call's prompt, at ``CHARS_PER_TOKEN``, plus its ``max_tokens`` reply)."""

    items: int
    calls: int
    prompt_tokens: int
    reply_tokens: int

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.reply_tokens

    def check_cap(self, cap: int) -> None:
        """``InputError`` on ``token_cap`` when the estimate is above it (nothing is sent)."""
        if self.tokens > cap:
            raise InputError(
                {
                    "token_cap": [
                        f"The estimate is {self.tokens:,} tokens ({self.calls:,} calls on {self.items:,} "
                        f"items), above the cap of {cap:,}: nothing was sent."
                    ]
                }
            )

    def as_dict(self) -> dict:
        return {
            "items": self.items,
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "reply_tokens": self.reply_tokens,
            "tokens": self.tokens,
        }


def estimate_tokens(
    prompt_chars: Iterable[int], *, items: int, samples: int, max_tokens: int
) -> TokenEstimate:
    """The estimate of sending each prompt (its length in characters) ``samples`` times."""
    lengths = list(prompt_chars)
    prompt = sum(math.ceil(n / CHARS_PER_TOKEN) for n in lengths) * samples
    return TokenEstimate(items, len(lengths) * samples, prompt, len(lengths) * samples * max_tokens)


def approximate_estimate(study: Study, parameters: JudgeParameters) -> TokenEstimate:
    """The web's estimate before a job is queued, from the pages as a judge would see them
    (``model_task`` on the state the job's seed draws; both orders where it swaps) without
    the workers' prompt builder: each prompt as its material, question and allowed answers,
    the study's instructions and ``PROMPT_OVERHEAD_CHARS``, times (1 + shots) for the
    examples. Every item counts (a resumed run costs less); past ``ESTIMATE_SAMPLE`` items,
    the first ones scaled. The job checks the cap again with the exact prompts."""
    kind = study.task_kind
    items = Item.objects.filter(study=study, is_attention_check=False).order_by("pk")
    total = items.count()
    lengths: list[int] = []
    for item in items[:ESTIMATE_SAMPLE]:
        item.study = study
        state = kind.prepare_assignment(item, random.Random(f"{parameters.seed}:state:{item.external_id}"))
        states = [state]
        if parameters.swap and (swapped := kind.swapped_state(item, state)) is not None:
            states.append(swapped)
        for each in states:
            task = kind.model_task(item, each)
            for question in task.questions:
                options = sum(len(o.text) + len(o.label) + 4 for o in question.options)
                page = len(task.material) + len(question.text) + options
                lengths.append(
                    PROMPT_OVERHEAD_CHARS + len(study.instructions) + page * (1 + parameters.shots)
                )
    read = min(total, ESTIMATE_SAMPLE)
    scale = total / read if read else 0.0
    estimate = estimate_tokens(
        lengths, items=read, samples=parameters.samples, max_tokens=parameters.max_tokens
    )
    return TokenEstimate(
        total,
        round(estimate.calls * scale),
        round(estimate.prompt_tokens * scale),
        round(estimate.reply_tokens * scale),
    )


# --- self-preference -----------------------------------------------------------------------

# A model family per maker, by the start of a model's name (its last path part, lowercase):
# a judge tends to prefer text from its own family.
FAMILIES = (
    ("openai", ("gpt", "chatgpt", "o1", "o3", "o4", "davinci", "text-davinci")),
    ("anthropic", ("claude",)),
    ("google", ("gemini", "gemma", "palm", "bard", "t5", "flan")),
    ("meta", ("llama", "meta-llama", "codellama", "opt")),
    ("mistral", ("mistral", "mixtral", "ministral", "codestral", "magistral")),
    ("alibaba", ("qwen", "qwq")),
    ("deepseek", ("deepseek",)),
    ("microsoft", ("phi",)),
    ("cohere", ("command", "aya")),
)
_LEAD = re.compile(r"[a-z]+")


def model_family(name: str) -> str:
    """The maker's family of a model or system name (``gpt-4o`` → ``openai``,
    ``meta-llama/Llama-3-8B`` → ``meta``); an unknown name's first word (``rome-v2`` → ``rome``)."""
    base = PurePath(name.strip().lower().rstrip("/")).name
    for family, starts in FAMILIES:
        for start in starts:
            if base.startswith(start) and not base[len(start) : len(start) + 1].isalpha():
                return family
    match = _LEAD.match(base)
    return match.group(0) if match else base


def study_systems(study: Study) -> list[str]:
    """The systems and models behind a study's text: each item's provenance ``system`` and
    ``model``, and each passage's ``system`` (questionnaire, ranking)."""
    found: set[str] = set()
    rows = Item.objects.filter(study=study).values_list("provenance", "payload")
    for provenance, payload in rows.iterator(chunk_size=2000):
        for key in ("system", "model"):
            if isinstance(provenance, dict) and isinstance(provenance.get(key), str) and provenance[key]:
                found.add(provenance[key])
        passages = payload.get("passages") if isinstance(payload, dict) else None
        for passage in passages if isinstance(passages, list) else []:
            if isinstance(passage, dict) and isinstance(passage.get("system"), str) and passage["system"]:
                found.add(passage["system"])
    return sorted(found)


def self_preference_warning(study: Study, model: str) -> str:
    """A warning when the judge's family is that of a system it judges, or ""."""
    family = model_family(model)
    same = [system for system in study_systems(study) if model_family(system) == family]
    if not same:
        return ""
    return (
        f"The judge {model} is of the {family} family, as are systems it judges: {', '.join(same[:10])}. "
        "Judges tend to prefer their own family's text (self-preference): compare with people's "
        "answers, or judge with a model of another family."
    )


# --- what the stored outputs say -----------------------------------------------------------


def swap_consistency(study: Study, participant: Participant) -> dict:
    """Of the questions a judge asked in both orders, the share whose majority answer was the
    same both ways: in all and per question (``{"rate", "compared", "consistent", "questions"}``;
    rate None when nothing was compared). Read from every output the judge stored on the study,
    so a resumed run reports the whole study."""
    per_question: dict[str, list[int]] = {}
    rows = ModelOutput.objects.filter(study=study, participant=participant).values_list("details", flat=True)
    for details in rows:
        for qid, same in ((details or {}).get("swap") or {}).items():
            counts = per_question.setdefault(qid, [0, 0])
            counts[0] += 1
            counts[1] += int(bool(same))
    compared = sum(c for c, _ in per_question.values())
    consistent = sum(s for _, s in per_question.values())
    return {
        "rate": round(consistent / compared, 4) if compared else None,
        "compared": compared,
        "consistent": consistent,
        "questions": {
            qid: {"compared": c, "consistent": s, "rate": round(s / c, 4)}
            for qid, (c, s) in sorted(per_question.items())
        },
    }
