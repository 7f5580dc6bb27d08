"""``MODEL_CPU_THREADS``: a model loaded on the CPU runs with the threads the setting gives."""

from __future__ import annotations

import pytest
import torch

from workers.lm.loading import load_lm


@pytest.fixture
def restore_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_a_model_loaded_on_the_cpu_uses_the_configured_threads(settings, tiny_registry, restore_threads):
    torch.set_num_threads(2)
    settings.MODEL_CPU_THREADS = 1
    load_lm("tiny-gpt2", device="cpu", registry=tiny_registry)
    assert torch.get_num_threads() == 1


def test_zero_leaves_the_threads_as_they_are(settings, tiny_registry, restore_threads):
    torch.set_num_threads(2)
    settings.MODEL_CPU_THREADS = 0
    load_lm("tiny-gpt2", device="cpu", registry=tiny_registry)
    assert torch.get_num_threads() == 2
