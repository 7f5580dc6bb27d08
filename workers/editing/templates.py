"""Short context prefixes that ROME and MEMIT average keys and values over.

The model writes them itself from a few opening words (seeded, top-k 5), so the subject is
seen after varied but natural text. They come from the unedited model and are kept per
model for the life of the process.

A prefix is the opening's tokens and the generated ones decoded together: decoding the
new tokens alone and gluing them to the opening loses the space between them wherever the
tokenizer puts it in the decoder, not in the token (word-level vocabularies join words
with spaces; sentencepiece/metaspace drops the first token's space), giving "Thelocation".
"""

from __future__ import annotations

from collections.abc import Sequence

from workers.lm.generation import GenerationRequest, Sampling, generate_texts
from workers.lm.loading import LoadedLM
from workers.lm.tokens import decoded

OPENINGS = ("The", "Therefore", "Because", "I", "You")
_CACHE: dict[tuple, list[str]] = {}


def context_templates(lm: LoadedLM, lengths_and_counts: Sequence[Sequence[int]]) -> list[str]:
    """``["{}", "<prefix>. {}", …]``: ``count`` prefixes of ``length`` tokens for each pair."""
    key = (lm.spec, str(lm.device), tuple(tuple(pair) for pair in lengths_and_counts))
    if key not in _CACHE:
        templates = ["{}"]
        for length, count in lengths_and_counts:
            requests = [
                GenerationRequest(
                    OPENINGS[i % len(OPENINGS)],
                    seed=7919 * length + i,
                    sampling=Sampling(top_p=1.0, top_k=5),
                    max_new_tokens=length,
                )
                for i in range(count)
            ]
            for request, output in zip(requests, generate_texts(lm, requests, batch_size=count), strict=True):
                prefix = opening_and_continuation(lm, request.prompt, output.token_ids)
                templates.append(f"{prefix.replace('{', ' ').replace('}', ' ').strip()}. {{}}")
        _CACHE[key] = templates
    return list(_CACHE[key])


def opening_and_continuation(lm: LoadedLM, opening: str, new_tokens: tuple[int, ...]) -> str:
    """The opening and the generated tokens as one text (see the module docstring)."""
    tokenizer = lm.tokenizer
    opening_ids = tokenizer(opening, add_special_tokens=False)["input_ids"]
    return decoded(tokenizer, [*opening_ids, *new_tokens])
