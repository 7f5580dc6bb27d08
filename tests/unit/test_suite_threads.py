"""Each test process runs torch on one thread (``OMP_NUM_THREADS=1`` in pyproject's test
environment): ``make test``'s two workers share two cores, and an operation spread over both
spun against the other worker. The Celery workers a test starts inherit the setting."""

from __future__ import annotations

import os

import pytest


def test_the_test_environment_asks_for_one_thread():
    assert os.environ["OMP_NUM_THREADS"] == "1"
    assert os.environ["MKL_NUM_THREADS"] == "1"


def test_torch_runs_its_operations_on_one_thread():
    torch = pytest.importorskip("torch")
    assert torch.get_num_threads() == 1
