"""Dawid–Skene and MACE (``stats.competence``) against crowd-kit and a simulation.

The expected values were computed with crowd-kit 1.4.2 (Toloka's library, which the
platform does not depend on) on the same answers: its own toy data set (``toy_answers_df``
in crowd-kit's tests, with the ground truth its tests check) and a 40-unit data set drawn
below with a fixed generator. crowd-kit's Dawid–Skene stops on a bound that counts the
class priors once per answer, so it may stop before EM has converged; the full-convergence
values below come from it with its stopping rule off (``tol=-1``, 1000 iterations), and
after a fixed 10 iterations both give the same priors. MACE starts from random parameters
in both, so its values agree to the optimum's precision (1e-3), not bit for bit.
``docs/tools/crowdkit_reference.py`` prints crowd-kit's values on these data sets.
"""

import numpy as np
import pytest

from stats.competence import Answers, dawid_skene, mace

# crowd-kit's toy data set: (annotator, unit, label); labels 0 = "no", 1 = "yes".
TOY = [
    (1, 1, 0), (1, 2, 1), (1, 3, 1), (1, 4, 1), (1, 5, 1),
    (2, 1, 1), (2, 2, 1), (2, 3, 0), (2, 4, 1), (2, 5, 0),
    (3, 2, 1), (3, 3, 0), (3, 4, 1), (3, 5, 0),
    (4, 1, 1), (4, 2, 0), (4, 3, 1), (4, 4, 1), (4, 5, 0),
    (5, 1, 0), (5, 2, 0), (5, 3, 0), (5, 4, 1), (5, 5, 0),
]  # fmt: skip
TOY_TRUTH = [1, 1, 0, 1, 0]  # crowd-kit's toy_ground_truth_df: yes yes no yes no


def toy_answers() -> Answers:
    rows = np.array(TOY)
    return Answers.of(rows[:, 1] - 1, rows[:, 0] - 1, rows[:, 2])


def reference_answers() -> Answers:
    """40 units of 3 categories (the truth is ``unit % 3``), 6 annotators of accuracy
    0.95 … 0.35, 4 of them on each unit, drawn with a linear congruential generator (the
    same numbers in any Python, so crowd-kit read exactly these)."""
    state = 12345

    def draw() -> float:
        nonlocal state
        state = (1103515245 * state + 12345) % 2**31
        return state / 2**31

    accuracy = (0.95, 0.9, 0.8, 0.65, 0.5, 0.35)
    rows = []
    for unit in range(40):
        truth = unit % 3
        for annotator in range(6):
            if (unit // 3 + annotator) % 3 == 0:
                continue
            right = draw() < accuracy[annotator]
            label = truth if right else (truth + 1 + int(draw() * 2)) % 3
            rows.append((unit, annotator, label))
    unit, annotator, label = (np.array(column) for column in zip(*rows, strict=True))
    return Answers.of(unit, annotator, label)


def labels(text: str) -> np.ndarray:
    return np.array([int(c) for c in text])


def test_dawid_skene_finds_crowd_kits_toy_truth_with_its_confusions():
    model = dawid_skene(toy_answers())
    assert model.labels.tolist() == TOY_TRUTH
    np.testing.assert_allclose(model.posterior, np.eye(2)[TOY_TRUTH], atol=1e-6)
    np.testing.assert_allclose(model.priors, [0.4, 0.6], atol=1e-6)
    # crowd-kit's errors_: w1 answers "yes" on every "no" unit and 2 of 3 "yes" ones
    np.testing.assert_allclose(model.confusion[0], [[0.0, 1.0], [1 / 3, 2 / 3]], atol=1e-6)
    np.testing.assert_allclose(model.competence, [0.4, 1.0, 1.0, 0.6, 0.6], atol=1e-6)


def test_mace_matches_crowd_kit_on_its_toy_data():
    variational = mace(toy_answers())
    np.testing.assert_allclose(
        variational.posterior[:, 1], [0.9721788, 0.99846034, 0.00078546, 0.99976698, 0.00030907], atol=1e-4
    )
    # crowd-kit's spamming_[:, 1]: the variational weight of "knows the answer"
    np.testing.assert_allclose(
        variational.knowing_weight, [0.05537747, 0.88085376, 0.86474243, 0.20635723, 0.20957107], atol=1e-4
    )
    assert variational.labels.tolist() == TOY_TRUTH
    em = mace(toy_answers(), variational=False)
    np.testing.assert_allclose(
        em.competence, [0.00200191, 0.9969184, 0.99750561, 0.17035694, 0.33223733], atol=1e-4
    )
    assert em.labels.tolist() == TOY_TRUTH


def test_dawid_skene_matches_crowd_kit_on_the_reference_data():
    model = dawid_skene(reference_answers(), max_iterations=1000, tolerance=-1)
    assert model.labels.tolist() == labels("0120120120120120220220120120120100120100").tolist()
    np.testing.assert_allclose(model.priors, [0.4161, 0.275, 0.3089], atol=1e-4)
    np.testing.assert_allclose(model.competence, [0.9552, 0.896, 0.8245, 0.6013, 0.6704, 0.3144], atol=1e-4)
    np.testing.assert_allclose(model.posterior[11], [0.2207, 0.0, 0.7793], atol=1e-4)
    np.testing.assert_allclose(model.posterior[29], [0.3033, 0.0, 0.6967], atol=1e-4)
    # crowd-kit after exactly 10 iterations (its DawidSkene(n_iter=10, tol=0))
    ten = dawid_skene(reference_answers(), max_iterations=10, tolerance=-1)
    np.testing.assert_allclose(ten.priors, [0.433758, 0.257335, 0.308908], atol=1e-6)


@pytest.mark.parametrize(
    ("variational", "expected_labels", "weights", "unsure"),
    [
        (
            True,
            "0120120120220120220220120120020120120100",
            [0.9371, 0.7213, 0.8288, 0.3953, 0.5095, 0.0321],
            {10: [0.1255, 0.3396, 0.5348], 16: [0.0308, 0.2002, 0.769], 32: [0.3545, 0.0319, 0.6136]},
        ),
        (
            False,
            "0120120120120120120220120120020100120100",
            [0.8918, 0.7463, 0.8789, 0.4089, 0.5364, 0.0116],
            {10: [0.1478, 0.4894, 0.3629], 29: [0.1934, 0.0163, 0.7902], 32: [0.752, 0.0784, 0.1696]},
        ),
    ],
)
def test_mace_matches_crowd_kit_on_the_reference_data(variational, expected_labels, weights, unsure):
    model = mace(reference_answers(), variational=variational)
    assert model.labels.tolist() == labels(expected_labels).tolist()
    np.testing.assert_allclose(model.knowing_weight, weights, atol=1e-3)
    for unit, posterior in unsure.items():
        np.testing.assert_allclose(model.posterior[unit], posterior, atol=1e-3)


def test_mace_is_reproducible_from_its_seed():
    first, second = mace(reference_answers(), seed=3), mace(reference_answers(), seed=3)
    np.testing.assert_array_equal(first.posterior, second.posterior)
    np.testing.assert_array_equal(first.competence, second.competence)


# The simulation: annotators who know the answer with these probabilities and otherwise
# answer at random (MACE's own assumptions); Dawid–Skene's competence is then the accuracy
# competence + (1 − competence) / categories. Over seeds 0–11 of this design the largest
# error of any annotator was 0.072 (Dawid–Skene) and 0.107 (MACE); the test allows more.
SIMULATED_COMPETENCE = (0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.1)
DS_TOLERANCE = 0.1
MACE_TOLERANCE = 0.13
MEAN_TOLERANCE = 0.05


def simulate(seed: int, units: int = 600, categories: int = 3, per_unit: int = 5):
    rng = np.random.default_rng(seed)
    competence = np.array(SIMULATED_COMPETENCE)
    truth = rng.integers(0, categories, units)
    unit = np.repeat(np.arange(units), per_unit)
    annotator = np.concatenate([rng.choice(len(competence), per_unit, replace=False) for _ in range(units)])
    knows = rng.random(len(unit)) < competence[annotator]
    label = np.where(knows, truth[unit], rng.integers(0, categories, len(unit)))
    answers = Answers.of(
        unit, annotator, label, units=units, annotators=len(competence), categories=categories
    )
    return truth, competence, answers


def test_both_models_recover_simulated_annotators():
    truth, competence, answers = simulate(seed=0)
    accuracy = competence + (1 - competence) / answers.categories
    ds = dawid_skene(answers)
    assert np.abs(ds.competence - accuracy).max() < DS_TOLERANCE
    assert np.abs(ds.competence - accuracy).mean() < MEAN_TOLERANCE
    fitted = mace(answers, seed=0, restarts=3)
    assert np.abs(fitted.competence - competence).max() < MACE_TOLERANCE
    assert np.abs(fitted.competence - competence).mean() < MEAN_TOLERANCE
    for model in (ds, fitted):
        assert np.argmin(model.competence) == len(competence) - 1  # the spammer is found
        assert (model.labels == truth).mean() > 0.93
    majority = np.argmax(answers.votes(), axis=1)
    assert (fitted.labels == truth).mean() > (majority == truth).mean()


def test_units_and_annotators_without_answers():
    answers = Answers.of([0, 0, 2], [0, 1, 0], [1, 1, 0], units=4, annotators=3, categories=2)
    for model in (dawid_skene(answers), mace(answers, restarts=1)):
        np.testing.assert_allclose(model.posterior.sum(axis=1), 1.0)
        assert np.isnan(model.competence[2])
        assert model.labels[0] == 1
    with pytest.raises(ValueError, match="same length"):
        Answers.of([0], [0, 1], [0])
