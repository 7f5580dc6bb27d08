"""The bundled sentence encoder, loaded offline, gives the cosine generality of a study."""

import numpy as np
import pytest

from scoring.models import Report
from scoring.services import compute_study_reports
from tests.helpers.reports import simulation_study
from workers.similarity import embed_sentences


def test_encoder_embeds_offline_and_keeps_meaning_close():
    vectors = embed_sentences(
        ["Can a cat climb trees?", "Are kittens able to climb trees?", "What is the GDP of Peru?"]
    )
    assert vectors.shape == (3, 384)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


@pytest.mark.django_db
def test_cosine_generality_with_the_encoder():
    study = simulation_study()
    compute_study_reports(study, embed=embed_sentences)
    row = Report.objects.get(
        study=study,
        population="all",
        metric="simulation.generality",
        group={"system": "GPT-4", "measure": "cosine"},
    )
    first, second = embed_sentences(["Can pigs use chopsticks?", "Can cows use forks?"])
    assert row.value == pytest.approx(1 - float(first @ second), abs=1e-5)
