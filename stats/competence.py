"""Annotator competence and aggregated labels: Dawid–Skene and MACE, by EM over NumPy arrays.

Both take one row per answer, ``(unit, annotator, label)`` as integer codes (``0..n-1``;
``stats.groups.factorize`` gives them), and return a ``LabelModel``: per unit the posterior
over the categories and its most probable label, per annotator an estimated competence.
Labels are categories: the order of an ordinal scale is not used (a 1–7 rating is seven
unrelated categories), which is why reports apply them to nominal questions and to
ordinal ones with few values only.

What each model assumes (``docs/statistics.md`` says the same for researchers):

- **Dawid–Skene** (Dawid & Skene 1979): each unit has one true category, drawn from class
  priors shared by all units; each annotator has a full confusion matrix (the probability
  of answering ``l`` when the truth is ``k``), the same on every unit; given the truth,
  answers are independent across annotators (conditional independence). Priors and
  matrices are maximum-likelihood estimates; EM starts from the majority vote's shares, so
  it is deterministic. Competence: the probability that the annotator's answer is right
  on a unit drawn from the priors, ``Σ_k prior_k · confusion[k, k]``.
- **MACE** (Hovy et al. 2013, Multi-Annotator Competence Estimation): the true category
  is uniform over the categories; on each unit an annotator either knows the answer (with
  probability ``competence``) and gives the truth, or spams with probability
  ``1 − competence`` and draws an answer from their own spamming distribution ``ξ``
  (whatever the truth); answers are independent given the truth. With ``variational``
  (the default, as in MACE and crowd-kit) competence has a symmetric Beta(0.5, 0.5) prior
  and ξ a symmetric Dirichlet(10) prior, fitted by variational Bayes; otherwise by EM with
  a small additive smoothing. EM starts from random parameters (seeded): several restarts,
  the one with the highest marginal likelihood kept. Competence: the posterior mean of the
  probability of knowing (EM: its estimate).

The algorithms follow the published papers and are checked against crowd-kit's
(Toloka) implementations on the same data (``tests/unit/test_competence.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Probabilities are kept above this before their logarithm (an empty confusion cell).
FLOOR = 1e-10
DS_MAX_ITERATIONS = 100
DS_TOLERANCE = 1e-5
MACE_ITERATIONS = 50
MACE_RESTARTS = 10
# MACE's priors: Beta on knowing / spamming, symmetric Dirichlet on the spamming strategy.
MACE_KNOWING_PRIOR = 0.5
MACE_SPAMMING_PRIOR = 0.5
MACE_STRATEGY_PRIOR = 10.0
# Initial parameters are drawn uniformly from [1, 1 + this] before normalising.
MACE_INITIAL_NOISE = 1.5


@dataclass(frozen=True)
class Answers:
    """One row per answer, as codes: ``unit``, ``annotator`` and ``label`` (equal lengths),
    with the numbers of units, annotators and categories (codes are below them)."""

    unit: np.ndarray
    annotator: np.ndarray
    label: np.ndarray
    units: int
    annotators: int
    categories: int

    @classmethod
    def of(
        cls,
        unit,
        annotator,
        label,
        *,
        units: int | None = None,
        annotators: int | None = None,
        categories: int | None = None,
    ) -> Answers:
        unit, annotator, label = (np.asarray(a, dtype=np.int64) for a in (unit, annotator, label))
        if not (len(unit) == len(annotator) == len(label)):
            raise ValueError("unit, annotator and label must have the same length")

        def size(codes: np.ndarray, given: int | None) -> int:
            needed = int(codes.max()) + 1 if len(codes) else 0
            if given is not None and given < needed:
                raise ValueError(f"a code {needed - 1} is beyond the given count {given}")
            return needed if given is None else given

        return cls(
            unit,
            annotator,
            label,
            size(unit, units),
            size(annotator, annotators),
            size(label, categories),
        )

    def __len__(self) -> int:
        return len(self.unit)

    def votes(self) -> np.ndarray:
        """Units × categories: how many answers gave each category."""
        counts = np.zeros((self.units, self.categories))
        np.add.at(counts, (self.unit, self.label), 1.0)
        return counts


@dataclass(frozen=True)
class LabelModel:
    """A fitted model: ``posterior`` (units × categories, rows sum to 1; a unit nobody
    answered keeps the prior), ``competence`` per annotator (NaN for one who answered
    nothing), the iterations run and the log-likelihood of the answers under the parameters
    of the last E-step."""

    model: str
    posterior: np.ndarray
    competence: np.ndarray
    iterations: int
    log_likelihood: float

    @property
    def labels(self) -> np.ndarray:
        """Per unit the most probable category (the lowest code on a tie)."""
        return np.argmax(self.posterior, axis=1)

    @property
    def confidence(self) -> np.ndarray:
        """Per unit the posterior probability of its label."""
        return self.posterior.max(axis=1)


@dataclass(frozen=True)
class DawidSkeneModel(LabelModel):
    """Also the class ``priors`` and each annotator's ``confusion`` (annotators × true ×
    answered: row ``k`` is the distribution of their answers when the truth is ``k``)."""

    priors: np.ndarray
    confusion: np.ndarray


@dataclass(frozen=True)
class MaceModel(LabelModel):
    """Also ``spamming`` (annotators × categories, each one's spamming distribution ξ) and
    ``weights``: per annotator the E-step's parameters of (spamming, knowing) (variational:
    ``exp(E[log θ])``, below the posterior mean; EM: the estimates themselves)."""

    spamming: np.ndarray
    weights: np.ndarray

    @property
    def knowing_weight(self) -> np.ndarray:
        """The parameter the E-step used for "knows the answer"."""
        return self.weights[:, 1]


# The fewest units answered by two annotators or more for competences to be estimated at all:
# a competence says how an annotator's answers relate to the others' on the same units.
MIN_SHARED_UNITS = 3
NOT_IDENTIFIABLE = "not identifiable"
# The fewest answers on items someone else also answered for one annotator's competence to be
# shown: below it the estimate is mostly the model's prior and its interval spans nearly
# everything (a random clicker with 5 answers came out second best on a participants page).
MIN_ANSWERS = 10
TOO_FEW_ANSWERS = "too few answers"
# Every reason a competence is not a number starts with one of these (pages and API read them).
UNESTIMABLE = (NOT_IDENTIFIABLE, TOO_FEW_ANSWERS)


def too_few_answers(compared: int, *, min_answers: int = MIN_ANSWERS) -> str | None:
    """Why ``compared`` answers (on items others also answered) are too few for a competence,
    or None when they are enough. The one place that decides it, for every competence measure."""
    if compared >= min_answers:
        return None
    return f"{TOO_FEW_ANSWERS}: {compared} on items others also answered, at least {min_answers} are needed"


@dataclass(frozen=True)
class Identifiability:
    """Whether the answers can tell annotators' competences apart. ``reason``: why the
    question's competences cannot be estimated (None: they can); ``annotators``: per
    annotator code, why theirs cannot (None: it can) when the question's can."""

    reason: str | None
    annotators: tuple[str | None, ...]

    @property
    def identifiable(self) -> bool:
        return self.reason is None


def competence_identifiability(
    answers: Answers, *, min_shared_units: int = MIN_SHARED_UNITS, min_answers: int = MIN_ANSWERS
) -> Identifiability:
    """Whether MACE's and Dawid–Skene's competences mean anything on these answers.

    Both models learn an annotator's competence only from how their answers agree with the
    others' on the same units; without that the fit returns its starting point or a
    boundary (one annotator alone: MACE 0.45, Dawid–Skene 0.99999999999, numbers that look
    like findings). So they need at least two annotators, at least ``min_shared_units``
    units answered by two of them or more, and at least one disagreement on those units
    (annotators who never disagree all get a competence of 1, which the answers cannot tell
    from agreeing by chance or by a shared habit). An annotator who shares no unit with
    another has no competence of their own even when the others have, nor one with fewer
    than ``min_answers`` answers on shared units (``too_few_answers``)."""
    if not len(answers):
        return Identifiability(f"{NOT_IDENTIFIABLE}: no answers", (None,) * answers.annotators)
    pairs = np.unique(np.stack([answers.unit, answers.annotator]), axis=1)  # one per unit and annotator
    per_unit = np.bincount(pairs[0], minlength=answers.units)
    shared = per_unit >= 2
    present = np.unique(answers.annotator)
    reason = None
    if len(present) < 2:
        reason = "one annotator only: no one else's answers to compare theirs with"
    elif int(shared.sum()) < min_shared_units:
        reason = (
            f"{int(shared.sum())} items answered by two annotators or more; "
            f"at least {min_shared_units} are needed"
        )
    elif not _any_disagreement(answers, shared):
        reason = "the annotators never disagree, so every competence would come out as 1"
    if reason is not None:
        return Identifiability(f"{NOT_IDENTIFIABLE}: {reason}", (None,) * answers.annotators)
    compared = np.bincount(answers.annotator[shared[answers.unit]], minlength=answers.annotators)
    alone = f"{NOT_IDENTIFIABLE}: shares no item with another annotator"
    return Identifiability(
        None,
        tuple(
            too_few_answers(int(compared[code]), min_answers=min_answers) if compared[code] else alone
            for code in range(answers.annotators)
        ),
    )


def _any_disagreement(answers: Answers, shared: np.ndarray) -> bool:
    """Whether some unit answered by two annotators or more got two different labels."""
    on_shared = shared[answers.unit]
    labelled = np.unique(np.stack([answers.unit[on_shared], answers.label[on_shared]]), axis=1)
    return bool((np.bincount(labelled[0], minlength=answers.units) >= 2).any())


def majority_shares(answers: Answers) -> np.ndarray:
    """Per unit each category's share of the votes (uniform for a unit without answers)."""
    votes = answers.votes()
    totals = votes.sum(axis=1, keepdims=True)
    uniform = np.full_like(votes, 1.0 / max(answers.categories, 1))
    return np.divide(votes, totals, out=uniform, where=totals > 0)


def dawid_skene(
    answers: Answers, *, max_iterations: int = DS_MAX_ITERATIONS, tolerance: float = DS_TOLERANCE
) -> DawidSkeneModel:
    """Dawid–Skene by EM from the majority vote's shares, until the log-likelihood gains
    less than ``tolerance`` per answer (or ``max_iterations``)."""
    posterior = majority_shares(answers)
    priors = posterior.mean(axis=0) if answers.units else np.full(answers.categories, np.nan)
    confusion = _ds_confusion(answers, posterior)
    likelihood, iterations = -np.inf, 0
    while iterations < max_iterations:
        iterations += 1
        posterior, new_likelihood = _ds_e_step(answers, priors, confusion)
        priors = posterior.mean(axis=0)
        confusion = _ds_confusion(answers, posterior)
        converged = new_likelihood - likelihood < tolerance * max(len(answers), 1)
        likelihood = new_likelihood
        if converged:
            break
    competence = np.einsum("k,akk->a", priors, confusion)
    competence[np.bincount(answers.annotator, minlength=answers.annotators) == 0] = np.nan
    return DawidSkeneModel(
        "dawid_skene", posterior, competence, iterations, float(likelihood), priors, confusion
    )


def _ds_confusion(answers: Answers, posterior: np.ndarray) -> np.ndarray:
    """M-step: each annotator's expected counts of (truth, answer), normalised per truth."""
    k = answers.categories
    # counts[a, l, :] += posterior[u, :] for every answer (u, a, l); then truth before answer
    cells = answers.annotator * k + answers.label
    counts = _sum_rows(cells, posterior[answers.unit], answers.annotators * k)
    counts = np.maximum(counts.reshape(answers.annotators, k, k).transpose(0, 2, 1), FLOOR)
    return counts / counts.sum(axis=2, keepdims=True)


def _ds_e_step(answers: Answers, priors: np.ndarray, confusion: np.ndarray) -> tuple[np.ndarray, float]:
    """Each unit's posterior over the truth (log prior + Σ log P(answer | truth), normalised)
    and the log-likelihood of the answers under these parameters."""
    log_confusion = np.log(confusion)  # annotators × k × k: the logarithms once, not per answer
    log_answers = log_confusion[answers.annotator, :, answers.label]
    log_joint = _sum_rows(answers.unit, log_answers, answers.units) + np.log(np.maximum(priors, FLOOR))
    log_marginal = _log_sum_exp(log_joint)
    return np.exp(log_joint - log_marginal[:, None]), float(log_marginal.sum())


def mace(
    answers: Answers,
    *,
    seed: int = 0,
    restarts: int = MACE_RESTARTS,
    iterations: int = MACE_ITERATIONS,
    variational: bool = True,
    tolerance: float | None = None,
    start: MaceModel | None = None,
) -> MaceModel:
    """MACE: ``restarts`` runs of up to ``iterations`` EM steps each from random parameters
    (``seed``), keeping the run with the highest log marginal likelihood. ``tolerance``: a
    run also stops once an iteration changes the log-likelihood by less than this per
    answer (None: every run makes all its iterations, as MACE and crowd-kit do).
    ``start``: one run from that fit's parameters instead (a bootstrap's refits start at the
    whole data's estimate: the optimum near it is found in a few steps, with the states
    labelled as in the whole data's fit, where random starts cost tens of steps each)."""
    rng = np.random.default_rng(seed)
    smoothing = 0.01 / max(answers.categories, 1)
    best: tuple[_MaceStep, np.ndarray, np.ndarray] | None = None
    ran = 0
    for _ in range(1 if start else max(restarts, 1)):
        states, spamming = (start.weights, start.spamming) if start else random_mace_start(rng, answers)
        step = _mace_e_step(answers, states, spamming)
        for _ in range(iterations):
            ran += 1
            states, spamming = _mace_m_step(step, variational, smoothing)
            previous, step = step.log_likelihood, _mace_e_step(answers, states, spamming)
            if tolerance is not None and abs(step.log_likelihood - previous) < tolerance * max(
                len(answers), 1
            ):
                break
        if best is None or step.log_likelihood > best[0].log_likelihood:
            best = (step, states, spamming)
    assert best is not None
    final, states, spamming = best
    if variational:
        prior = MACE_KNOWING_PRIOR + MACE_SPAMMING_PRIOR
        competence = (final.knowing + MACE_KNOWING_PRIOR) / (final.answered + prior)
    else:
        competence = states[:, 1].copy()
    competence[final.answered == 0] = np.nan
    return MaceModel("mace", final.posterior, competence, ran, final.log_likelihood, spamming, states)


@dataclass(frozen=True)
class _MaceStep:
    """An E-step's results: the posterior of each unit's truth, the log marginal likelihood,
    and per annotator the expected numbers of answers known (``knowing``) and spammed per
    category (``spammed``, annotators × categories), and answers given."""

    posterior: np.ndarray
    log_likelihood: float
    knowing: np.ndarray
    spammed: np.ndarray
    answered: np.ndarray


def random_mace_start(rng: np.random.Generator, answers: Answers) -> tuple[np.ndarray, np.ndarray]:
    """Random initial parameters: per annotator the weights of (spamming, knowing), and the
    spamming distributions."""
    states = rng.uniform(1.0, 1.0 + MACE_INITIAL_NOISE, size=(answers.annotators, 2))
    strategy = rng.uniform(1.0, 1.0 + MACE_INITIAL_NOISE, size=(answers.annotators, answers.categories))
    return states / states.sum(axis=1, keepdims=True), strategy / strategy.sum(axis=1, keepdims=True)


def _mace_e_step(answers: Answers, states: np.ndarray, spamming: np.ndarray) -> _MaceStep:
    """``states``: per annotator the weights of (spamming, knowing): probabilities under EM,
    variational weights (which need not sum to 1) under variational Bayes."""
    a, u, label = answers.annotator, answers.unit, answers.label
    k = answers.categories
    spam_part = states[a, 0] * spamming[a, label]  # P(answer, spammed) for each answer
    know_part = states[a, 1]  # P(answer, known) when the truth is the answer
    # P(answer | truth k): spam_part for every k, plus know_part at k = label
    per_truth = np.repeat(spam_part[:, None], k, axis=1)
    per_truth[np.arange(len(label)), label] += know_part
    log_joint = _sum_rows(u, np.log(np.maximum(per_truth, FLOOR)), answers.units) - np.log(k)
    log_marginal = _log_sum_exp(log_joint)
    posterior = np.exp(log_joint - log_marginal[:, None])
    # P(spammed | answers) = Σ_k P(truth k | answers) · spam_part / P(answer | truth k)
    spammed_share = (posterior[u] * spam_part[:, None] / np.maximum(per_truth, FLOOR)).sum(axis=1)
    known_share = posterior[u, label] * know_part / np.maximum(spam_part + know_part, FLOOR)
    cells = np.bincount(a * k + label, weights=spammed_share, minlength=answers.annotators * k)
    spammed = cells.reshape(answers.annotators, k)
    return _MaceStep(
        posterior=posterior,
        log_likelihood=float(log_marginal.sum()),
        knowing=np.bincount(a, weights=known_share, minlength=answers.annotators),
        spammed=spammed,
        answered=np.bincount(a, minlength=answers.annotators).astype(np.float64),
    )


def _mace_m_step(step: _MaceStep, variational: bool, smoothing: float) -> tuple[np.ndarray, np.ndarray]:
    """New (spamming, knowing) weights and spamming distributions from the expected counts."""
    states = np.column_stack([step.spammed.sum(axis=1), step.knowing])
    if variational:
        states = variational_weights(states, np.array([MACE_SPAMMING_PRIOR, MACE_KNOWING_PRIOR]))
        strategy = variational_weights(step.spammed, np.full(step.spammed.shape[1], MACE_STRATEGY_PRIOR))
        return states, strategy
    return _smoothed(states, smoothing), _smoothed(step.spammed, smoothing)


def variational_weights(counts: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Variational Bayes weights ``exp(ψ(count + prior) − ψ(Σ (count + prior)))`` over the
    last axis (per row; per resample and row in ``stats.competence_refits``)."""
    from scipy.special import digamma  # imported on use: see stats/__init__.py

    posterior = counts + prior
    return np.exp(digamma(posterior) - digamma(posterior.sum(axis=-1, keepdims=True)))


def _log_sum_exp(log_values: np.ndarray) -> np.ndarray:
    """Per row ``log Σ exp``, shifted by the row's maximum so that nothing underflows."""
    if log_values.shape[1] == 0:
        return np.full(log_values.shape[0], -np.inf)
    top = log_values.max(axis=1)
    return top + np.log(np.exp(log_values - top[:, None]).sum(axis=1))


def _sum_rows(index: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """``size`` × columns: the rows of ``values`` summed by ``index`` (one bincount per
    column: categories are few, answers many)."""
    columns = [np.bincount(index, weights=values[:, c], minlength=size) for c in range(values.shape[1])]
    return np.column_stack(columns) if columns else np.zeros((size, 0))


def _smoothed(counts: np.ndarray, smoothing: float) -> np.ndarray:
    """Rows normalised after adding ``smoothing`` to every count (zero rows stay zero)."""
    counts = counts + smoothing
    totals = counts.sum(axis=1, keepdims=True)
    return np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
