"""Context prefixes keep the space after their opening word whatever the tokenizer.

Two tokenizers built here (nothing downloaded), each on a small random GPT-2: a word-level
one (words joined by the decoder) and a Llama-style one (metaspace "▁" words, whose decoder
drops the first token's space). Every vocabulary entry is a whole word, so any prefix that
is not a sequence of known words has two glued together ("Thelocation").
"""

from __future__ import annotations

import pytest

from workers.editing.templates import OPENINGS, context_templates

WORDS = [
    *OPENINGS,
    "location",
    "river",
    "market",
    "walked",
    "near",
    "the",
    "old",
    "city",
    "garden",
    "boat",
    "painted",
    "again",
]


def word_level_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {word: index for index, word in enumerate(["[UNK]", "[EOS]", *WORDS])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="[UNK]", eos_token="[EOS]", pad_token="[EOS]"
    )


def metaspace_tokenizer():
    """Sentencepiece-style: each word is "▁word", the decoder turns "▁" into spaces."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {piece: index for index, piece in enumerate(["<unk>", "</s>", *(f"▁{w}" for w in WORDS)])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="<unk>", eos_token="</s>", pad_token="</s>"
    )


@pytest.fixture(params=[word_level_tokenizer, metaspace_tokenizer], ids=["word-level", "metaspace"])
def small_lm(request, tmp_path):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from workers.lm.loading import load_lm

    tokenizer = request.param()
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=64,
        n_embd=16,
        n_layer=1,
        n_head=2,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.eos_token_id,
    )
    directory = tmp_path / request.param.__name__
    GPT2LMHeadModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    name = f"small-{request.param.__name__}"
    return load_lm(name, device="cpu", registry={name: {"path": str(directory), "dtype": "float32"}})


def test_prefixes_keep_the_space_after_the_opening_word(small_lm):
    templates = context_templates(small_lm, [[6, 5]])
    prefixes = [t.removesuffix(". {}") for t in templates[1:]]
    assert templates[0] == "{}" and len(prefixes) == 5
    assert [p.split(" ")[0] for p in prefixes] == list(OPENINGS)
    assert max(len(p.split()) for p in prefixes) > 1  # something was generated after the openings
    for prefix in prefixes:
        assert all(word in WORDS for word in prefix.split()), prefix
