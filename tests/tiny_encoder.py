"""A tiny BERT-style encoder for the trained-rater tests: random weights, a word-level tokenizer.

A trained rater starts from an encoder and fine-tunes all of it, so a pretrained one is
not needed to show the code learns: the tests' studies carry a signal a two-layer,
32-wide encoder picks up in a few epochs. Nothing is trained here; the weights are
seeded, and ``tests/lm_fixtures.py``'s cache keeps the directory between sessions.
"""

from __future__ import annotations

from pathlib import Path

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# Every word the tests' synthetic studies use (others become [UNK], which still works).
WORDS = (  # noqa: SIM905 - a paragraph of words reads better than a list literal
    "the a an of and in on at to is was it its this that with by from for as not no yes "
    "fox owl cat dog hare crow wolf bear river hill field town road bridge tower garden lake "
    "red blue green old new small big quiet loud early late near far north south "
    "saw ran sat walked crossed watched found left met heard said built "
    "record report confirms denies mentions claim passage fact new main related "
    "great awful fine plain story people morning evening day night "
    "does support contradict old facts setting aside mostly still hold treats true "
    "reads like natural text person could have written nothing goes against"
).split()


def build_tiny_encoder(directory: Path, *, seed: int = 0) -> Path:
    """Write the tokenizer and a seeded ``BertModel`` (no head) to ``directory``."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    vocabulary = {token: index for index, token in enumerate(SPECIAL + sorted(set(WORDS)))}
    word_level = Tokenizer(models.WordLevel(vocab=vocabulary, unk_token="[UNK]"))
    word_level.normalizer = normalizers.Lowercase()
    word_level.pre_tokenizer = pre_tokenizers.Whitespace()
    cls, sep = vocabulary["[CLS]"], vocabulary["[SEP]"]
    word_level.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=word_level,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )
    config = BertConfig(
        vocab_size=len(vocabulary),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        pad_token_id=vocabulary["[PAD]"],
        initializer_range=0.1,  # wider than BERT's 0.02: the random encoder learns in fewer steps
    )
    torch.manual_seed(seed)
    model = BertModel(config)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory
