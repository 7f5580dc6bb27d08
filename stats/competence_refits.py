"""Dawid–Skene and MACE refitted on every bootstrap resample at once.

A bootstrap over items (``competence_intervals``) refits a model on each resample, where an
item drawn twice is two units with the same answers. Both models' EM treats the copies of a
unit alike (the same answers under the same parameters give the same posterior), so a copy
only counts twice: refitting on the original units with each weighted by its multiplicity
runs the same iterations to the same estimates, without building the copies. And the
resamples differ only in these weights, so one EM over a stack of them (resamples × units
× categories) replaces a hundred small fits: a report spent most of its competence time in
the fixed cost of NumPy calls on small arrays, a few hundred per refit.

Each resample keeps its own convergence: once it converges its parameters stay as they
were, while the others go on, so every resample ends where its own fit would
(``tests/unit/test_competence_refits.py`` compares them with ``dawid_skene`` and ``mace``
refitted on copied answers, ``tests/helpers/competence_copies.py``). Resamples are taken in chunks of
at most ``CHUNK_ROWS`` answers × categories, which bounds the memory a stack takes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .competence import (
    DS_MAX_ITERATIONS,
    DS_TOLERANCE,
    FLOOR,
    MACE_ITERATIONS,
    MACE_KNOWING_PRIOR,
    MACE_RESTARTS,
    MACE_SPAMMING_PRIOR,
    MACE_STRATEGY_PRIOR,
    Answers,
    MaceModel,
    majority_shares,
    random_mace_start,
    variational_weights,
)

# Answers × resamples × categories in one stack: 800 KB a float array. Larger stacks were
# slower on a 3,000-answer question (memory, not NumPy calls, bounds them there).
CHUNK_ROWS = 100_000


@dataclass(frozen=True)
class _Grouping:
    """Sums of an answer-indexed axis by a code (unit, annotator, or annotator × label)."""

    order: np.ndarray
    starts: np.ndarray
    present: np.ndarray
    size: int
    sorted: bool  # the codes come in order already: no copy of the values to sort them

    @classmethod
    def of(cls, codes: np.ndarray, size: int) -> _Grouping:
        order = np.argsort(codes, kind="stable")
        ordered = codes[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(codes) else order
        return cls(order, starts, ordered[starts], size, bool(np.all(order == np.arange(len(order)))))

    def sum(self, values: np.ndarray) -> np.ndarray:
        """``values`` (resamples × answers × …) summed by code: resamples × size × …."""
        out = np.zeros((values.shape[0], self.size, *values.shape[2:]))
        if len(self.order):
            ordered = values if self.sorted else values[:, self.order]
            out[:, self.present] = np.add.reduceat(ordered, self.starts, axis=1)
        return out


@dataclass(frozen=True)
class _Stack:
    """The answers once, with the weights of a chunk of resamples: ``unit_weight``
    (resamples × units: each unit's multiplicity) and ``weight`` (resamples × answers: that
    of each answer's unit)."""

    answers: Answers
    unit_weight: np.ndarray
    weight: np.ndarray
    by_unit: _Grouping
    by_annotator: _Grouping
    by_cell: _Grouping  # annotator × answered label

    @classmethod
    def of(cls, answers: Answers, unit_counts: np.ndarray) -> _Stack:
        """The answers in the order of their units (so that summing by unit moves nothing)."""
        by_unit = np.argsort(answers.unit, kind="stable")
        answers = replace(
            answers,
            unit=answers.unit[by_unit],
            annotator=answers.annotator[by_unit],
            label=answers.label[by_unit],
        )
        k = answers.categories
        unit_weight = unit_counts.astype(np.float64)
        return cls(
            answers,
            unit_weight,
            unit_weight[:, answers.unit],
            _Grouping.of(answers.unit, answers.units),
            _Grouping.of(answers.annotator, answers.annotators),
            _Grouping.of(answers.annotator * k + answers.label, answers.annotators * k),
        )

    def take(self, rows: np.ndarray) -> _Stack:
        """The same answers under the resamples ``rows`` only."""
        return replace(self, unit_weight=self.unit_weight[rows], weight=self.weight[rows])

    def sizes(self) -> np.ndarray:
        """Per resample the answers of its copied units (a refit's ``len(answers)``)."""
        return np.maximum(self.weight.sum(axis=1), 1)

    def answered(self) -> np.ndarray:
        """Resamples × annotators: the answers each annotator has in each resample."""
        return self.by_annotator.sum(self.weight[:, :, None])[:, :, 0]


def _chunks(answers: Answers, unit_counts: np.ndarray):
    """The resamples in stacks of at most ``CHUNK_ROWS`` answers × categories; the answers
    are sorted and grouped once for all of them."""
    whole = _Stack.of(answers, unit_counts)
    step = max(1, CHUNK_ROWS // max(len(answers) * max(answers.categories, 1), 1))  # resamples
    for start in range(0, len(unit_counts), step):
        yield whole.take(np.arange(start, min(start + step, len(unit_counts))))


def _log_sum_exp(log_values: np.ndarray) -> np.ndarray:
    """``log Σ exp`` over the last axis, shifted by its maximum so that nothing underflows."""
    top = log_values.max(axis=-1)
    return top + np.log(np.exp(log_values - top[..., None]).sum(axis=-1))


# --- Dawid–Skene ---------------------------------------------------------------------------


def bootstrap_dawid_skene(
    answers: Answers,
    unit_counts: np.ndarray,
    *,
    max_iterations: int = DS_MAX_ITERATIONS,
    tolerance: float = DS_TOLERANCE,
) -> np.ndarray:
    """Resamples × annotators: ``dawid_skene``'s competences on each resample of the units
    (rows of ``unit_counts``), NaN for an annotator with no answer in it."""
    if not len(unit_counts):
        return np.zeros((0, answers.annotators))
    return np.vstack(
        [_dawid_skene_stack(stack, max_iterations, tolerance) for stack in _chunks(answers, unit_counts)]
    )


def _dawid_skene_stack(stack: _Stack, max_iterations: int, tolerance: float) -> np.ndarray:
    answers = stack.answers
    shares = majority_shares(answers)
    posterior = np.broadcast_to(shares, (len(stack.unit_weight), *shares.shape))
    state = {"priors": _ds_priors(stack, posterior), "confusion": _ds_confusion(stack, posterior)}
    likelihood = np.full(len(stack.unit_weight), -np.inf)
    limit = tolerance * stack.sizes()
    active = np.arange(len(likelihood))  # the resamples not converged yet
    for _ in range(max_iterations):
        if not len(active):
            break
        running = stack.take(active)
        posterior, new_likelihood = _ds_e_step(running, state["priors"][active], state["confusion"][active])
        state["priors"][active] = _ds_priors(running, posterior)
        state["confusion"][active] = _ds_confusion(running, posterior)
        changed = new_likelihood - likelihood[active] < limit[active]
        likelihood[active] = new_likelihood
        active = active[~changed]
    competence = np.einsum("rk,rakk->ra", state["priors"], state["confusion"])
    competence[stack.answered() == 0] = np.nan
    return competence


def _ds_priors(stack: _Stack, posterior: np.ndarray) -> np.ndarray:
    """Per resample the class priors: the mean posterior over its (copied) units."""
    units = stack.unit_weight.sum(axis=1, keepdims=True)
    summed = np.einsum("ru,ruk->rk", stack.unit_weight, posterior)
    return np.divide(summed, units, out=np.full(summed.shape, np.nan), where=units > 0)


def _ds_confusion(stack: _Stack, posterior: np.ndarray) -> np.ndarray:
    """M-step: each annotator's expected counts of (truth, answer), normalised per truth."""
    answers, k = stack.answers, stack.answers.categories
    weighted = stack.weight[:, :, None] * posterior[:, answers.unit]
    counts = stack.by_cell.sum(weighted).reshape(len(posterior), answers.annotators, k, k)
    counts = np.maximum(counts.transpose(0, 1, 3, 2), FLOOR)
    return counts / counts.sum(axis=3, keepdims=True)


def _ds_e_step(stack: _Stack, priors: np.ndarray, confusion: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    answers = stack.answers
    log_answers = np.log(confusion)[:, answers.annotator, :, answers.label]  # answers × resamples × k
    log_joint = stack.by_unit.sum(log_answers.transpose(1, 0, 2))
    log_joint += np.log(np.maximum(priors, FLOOR))[:, None, :]
    log_marginal = _log_sum_exp(log_joint)
    posterior = np.exp(log_joint - log_marginal[..., None])
    return posterior, (stack.unit_weight * log_marginal).sum(axis=1)


# --- MACE ----------------------------------------------------------------------------------


def bootstrap_mace(
    answers: Answers,
    unit_counts: np.ndarray,
    *,
    start: MaceModel | None = None,
    seed: int = 0,
    restarts: int = MACE_RESTARTS,
    tolerance: float | None = None,
    iterations: int = MACE_ITERATIONS,
) -> np.ndarray:
    """Resamples × annotators: ``mace(resample, seed=seed, restarts=restarts,
    tolerance=tolerance, start=start)``'s competences (variational) on each resample of the
    units, NaN for an annotator with no answer in it. The random starts depend only on the
    seed and the numbers of annotators and categories, so every resample's restarts begin
    where its own fit's would."""
    if not len(unit_counts):
        return np.zeros((0, answers.annotators))
    if start is not None:
        starts = [(start.weights, start.spamming)]
    else:
        rng = np.random.default_rng(seed)
        starts = [random_mace_start(rng, answers) for _ in range(max(restarts, 1))]
    return np.vstack(
        [_mace_stack(stack, starts, tolerance, iterations) for stack in _chunks(answers, unit_counts)]
    )


def _mace_stack(stack: _Stack, starts: list, tolerance: float | None, iterations: int) -> np.ndarray:
    """Each start's run; per resample the one with the highest log marginal likelihood (the
    first on a tie, as ``mace`` keeps it)."""
    best: dict[str, np.ndarray] | None = None
    for states, spamming in starts:
        run = _mace_run(stack, states, spamming, tolerance, iterations)
        if best is None:
            best = run
            continue
        better = run["log_likelihood"] > best["log_likelihood"]
        for name, values in run.items():
            best[name][better] = values[better]
    assert best is not None
    prior = MACE_KNOWING_PRIOR + MACE_SPAMMING_PRIOR
    competence = (best["knowing"] + MACE_KNOWING_PRIOR) / (best["answered"] + prior)
    competence[best["answered"] == 0] = np.nan
    return competence


def _mace_run(
    stack: _Stack, states: np.ndarray, spamming: np.ndarray, tolerance: float | None, iterations: int
) -> dict[str, np.ndarray]:
    """EM from one start on every resample, each stopping on its own (``tolerance``: a change
    of log-likelihood per answer; None: all ``iterations``); the last E-step of each."""
    resamples = len(stack.unit_weight)
    step = _mace_e_step(
        stack,
        np.broadcast_to(states, (resamples, *states.shape)),
        np.broadcast_to(spamming, (resamples, *spamming.shape)),
    )
    limit = tolerance * stack.sizes() if tolerance is not None else np.full(resamples, -np.inf)
    active = np.arange(resamples)  # the resamples not converged yet
    for _ in range(iterations):
        if not len(active):
            break
        states, spamming = _mace_m_step({name: values[active] for name, values in step.items()})
        new = _mace_e_step(stack.take(active), states, spamming)
        changed = np.abs(new["log_likelihood"] - step["log_likelihood"][active]) < limit[active]
        for name, values in new.items():
            step[name][active] = values
        active = active[~changed]
    return step


def _mace_e_step(stack: _Stack, states: np.ndarray, spamming: np.ndarray) -> dict[str, np.ndarray]:
    """``stats.competence._mace_e_step`` on every resample: its expected counts are weighted
    by each answer's multiplicity, its log-likelihood by each unit's."""
    answers, k = stack.answers, stack.answers.categories
    a, label = answers.annotator, answers.label
    spam_part = states[:, a, 0] * spamming[:, a, label]  # resamples × answers
    know_part = states[:, a, 1]
    per_truth = np.repeat(spam_part[:, :, None], k, axis=2)
    per_truth[:, np.arange(len(label)), label] += know_part
    floored = np.maximum(per_truth, FLOOR)
    log_joint = stack.by_unit.sum(np.log(floored)) - np.log(k)
    log_marginal = _log_sum_exp(log_joint)
    posterior = np.exp(log_joint - log_marginal[..., None])
    on_answers = posterior[:, answers.unit]
    spammed_share = (on_answers * spam_part[:, :, None] / floored).sum(axis=2)
    known_share = (
        on_answers[:, np.arange(len(label)), label] * know_part / np.maximum(spam_part + know_part, FLOOR)
    )
    spammed = stack.by_cell.sum((stack.weight * spammed_share)[:, :, None])[:, :, 0]
    return {
        "log_likelihood": (stack.unit_weight * log_marginal).sum(axis=1),
        "knowing": stack.by_annotator.sum((stack.weight * known_share)[:, :, None])[:, :, 0],
        "spammed": spammed.reshape(len(spammed), answers.annotators, k),
        "answered": stack.answered(),
    }


def _mace_m_step(step: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Variational weights of (spamming, knowing) and the spamming distributions."""
    states = np.stack([step["spammed"].sum(axis=2), step["knowing"]], axis=2)
    states = variational_weights(states, np.array([MACE_SPAMMING_PRIOR, MACE_KNOWING_PRIOR]))
    strategy = variational_weights(step["spammed"], np.full(step["spammed"].shape[2], MACE_STRATEGY_PRIOR))
    return states, strategy
