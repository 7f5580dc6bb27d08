"""Loading local models offline and generating with recorded, reproducible seeds."""

from __future__ import annotations

import shutil

import pytest
import torch

from workers.generation.backend import ContinuationRequest, load_backend
from workers.lm.generation import GenerationRequest, Sampling, generate_texts, nucleus_probabilities
from workers.lm.loading import load_lm, pick_device, pick_dtype
from workers.lm.registry import ModelNotFound, resolve_model


def test_a_model_loads_by_registry_name_and_by_path(tiny_lm_dir, tiny_registry):
    by_name = load_lm("tiny-gpt2", registry=tiny_registry)
    by_path = load_lm(str(tiny_lm_dir), registry={})
    assert by_name.name == "tiny-gpt2" and by_name.spec.tag == "tiny-gpt2"
    assert by_path.name == str(tiny_lm_dir) and by_path.spec.tag.startswith(tiny_lm_dir.name)
    assert (by_name.device.type, by_name.dtype) == ("cpu", torch.float32)
    assert by_name.tokenizer.padding_side == "left" and by_name.tokenizer.pad_token is not None
    for (name, a), (_, b) in zip(
        by_name.model.state_dict().items(), by_path.model.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), name


def test_a_hub_id_loads_from_the_local_cache_only(tiny_lm_dir, settings, tmp_path):
    snapshot = tmp_path / "models--local--tiny" / "snapshots" / "0123abc"
    shutil.copytree(tiny_lm_dir, snapshot)
    (tmp_path / "models--local--tiny" / "refs").mkdir()
    (tmp_path / "models--local--tiny" / "refs" / "main").write_text("0123abc")
    settings.MODEL_CACHE_DIR = str(tmp_path)
    assert load_lm("local/tiny", registry={}).model.config.n_layer == 4
    with pytest.raises(ModelNotFound, match="local/absent"):
        load_lm("local/absent", registry={})


def test_names_that_are_nothing_are_refused_clearly():
    with pytest.raises(ModelNotFound, match="no such directory"):
        resolve_model("/nowhere/model", registry={})
    with pytest.raises(ModelNotFound, match="dtype"):
        resolve_model("x", registry={"x": {"path": "/m", "dtype": "int3"}})
    with pytest.raises(ValueError, match="Unknown generator '/nowhere/model'"):
        load_backend("/nowhere/model")


def test_half_precision_only_where_asked_or_on_cuda():
    cpu = pick_device("cpu")
    assert pick_dtype("auto", cpu) == torch.float32
    assert pick_dtype("bfloat16", cpu) == torch.bfloat16
    assert pick_dtype("auto", torch.device("cuda")) in (torch.float16, torch.bfloat16)


def test_a_request_gives_the_same_text_alone_and_in_any_batch(tiny_lm):
    requests = [
        GenerationRequest(
            "The teacher walked to the river.", seed=1, sampling=Sampling(top_p=0.9), max_new_tokens=20
        ),
        GenerationRequest("A young girl", seed=2, sampling=Sampling(top_p=1.0, top_k=5), max_new_tokens=12),
        GenerationRequest(
            "Lake Tolvik is located in", seed=3, sampling=Sampling(top_p=0.0), max_new_tokens=2
        ),
    ]
    batched = generate_texts(tiny_lm, requests, batch_size=3)
    alone = [generate_texts(tiny_lm, [request])[0] for request in requests]
    assert batched == alone
    assert batched[2].text.strip().startswith("Paris")
    assert all(0 < g.new_tokens <= r.max_new_tokens for g, r in zip(batched, requests, strict=True))


def test_seeds_decide_the_sample(tiny_lm):
    def sample(seed):
        request = GenerationRequest(
            "My neighbour", seed=seed, sampling=Sampling(top_p=1.0), max_new_tokens=30
        )
        return generate_texts(tiny_lm, [request])[0].text

    assert sample(7) == sample(7)
    assert len({sample(seed) for seed in range(5)}) > 1


def test_nucleus_keeps_the_smallest_set_reaching_p():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05], [0.05, 0.15, 0.3, 0.5]]))

    def probs(top_p, top_k=0, temperature=1.0):
        rows = torch.ones(2)
        return nucleus_probabilities(logits, rows * temperature, (rows * top_k).long(), rows * top_p)

    kept = probs(0.7)
    assert torch.allclose(kept[0], torch.tensor([0.5, 0.3, 0.0, 0.0]) / 0.8)
    assert torch.allclose(kept[1], torch.tensor([0.0, 0.0, 0.3, 0.5]) / 0.8)
    assert (torch.count_nonzero(probs(0.1), dim=-1) == 1).all()
    assert (torch.count_nonzero(probs(1.0, top_k=3), dim=-1) == 3).all()
    assert torch.allclose(probs(1.0), logits.exp())
    assert probs(1.0, temperature=0.5)[0, 0] > 0.5  # a lower temperature sharpens


def test_the_hugging_face_backend_records_model_decoding_and_seed(worker_settings):
    backend = load_backend("tiny-gpt2")
    [first, greedy] = backend.continue_texts(
        [
            ContinuationRequest("The baker painted the red door.", p=0.8, seed=11, max_new_tokens=24),
            ContinuationRequest("The baker painted the red door.", p=0.0, seed=12, max_new_tokens=24),
        ]
    )
    assert backend.name == first.model == "tiny-gpt2"
    assert first.seed == 11 and first.decoding["top_p"] == 0.8 and first.decoding["do_sample"] is True
    assert greedy.decoding == {"do_sample": False, "top_p": 0.0, "max_new_tokens": 24}
    assert first.text.strip() and greedy.text.strip()
