"""Job parameters: each kind's frozen dataclass and its serializer name the same fields, the
stored JSON comes back as the dataclass, and a key the dataclass lacks is refused."""

from __future__ import annotations

import dataclasses
import json

import pytest

from annotation.job_parameters import CounterfactualsParameters, RateLLMParameters
from annotation.models import Job
from annotation.services.jobs import (
    JOB_KINDS,
    JobParametersError,
    NoParameters,
    check_job_parameters,
    job_parameters,
)


@pytest.mark.parametrize("name", sorted(JOB_KINDS))
def test_every_job_kind_declares_the_same_fields_in_its_dataclass_and_its_serializer(name):
    spec = JOB_KINDS[name].parameters
    assert {f.name for f in dataclasses.fields(spec)} == set(spec.Serializer().fields), name


def test_a_rate_llm_jobs_stored_parameters_come_back_as_its_frozen_dataclass():
    stored = json.loads(json.dumps(check_job_parameters("rate_llm", {"model": "tiny", "shots": 2})))
    job = Job(kind="rate_llm", parameters=stored)

    parameters = job_parameters(job)

    assert parameters == RateLLMParameters(
        model="tiny", shots=2, seed=0, scoring="logprob", batch_size=8, max_new_tokens=8
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        parameters.shots = 3  # type: ignore[misc]


def test_lists_come_back_as_tuples_so_the_parameters_are_immutable_all_the_way_down():
    stored = check_job_parameters(
        "counterfactuals", {"questions": "/q.jsonl", "explainer": "m", "generators": ["a", "b"]}
    )
    parameters = CounterfactualsParameters.from_validated(stored)
    assert parameters.generators == ("a", "b") and parameters.modes == ("cot", "posthoc")


def test_the_dataclass_refuses_a_key_it_does_not_declare_and_a_missing_one():
    stored = check_job_parameters("rate_llm", {"model": "tiny"})
    with pytest.raises(JobParametersError, match="no parameter 'temperature'"):
        RateLLMParameters.from_validated({**stored, "temperature": 1.0})
    with pytest.raises(JobParametersError, match="model"):
        RateLLMParameters.from_validated({k: v for k, v in stored.items() if k != "model"})


def test_a_row_stored_before_a_parameter_existed_gets_the_serializers_default_for_it():
    stored = {
        "model": "tiny",
        "shots": 1,
        "seed": 0,
        "scoring": "logprob",
        "batch_size": 4,
    }  # no max_new_tokens

    parameters = job_parameters(Job(kind="rate_llm", parameters=stored))

    assert parameters.max_new_tokens == 8 and parameters.batch_size == 4
    assert job_parameters(Job(kind="reports", parameters={})).by == ("system",)


def test_a_kind_without_parameters_refuses_any():
    assert NoParameters.from_validated({}) == NoParameters()
    with pytest.raises(JobParametersError):
        NoParameters.from_validated({"n": 1})
