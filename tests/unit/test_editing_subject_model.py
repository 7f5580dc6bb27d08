"""Editing at the subject's last token, on the tiny model whose facts are recalled there.

``tests/tiny_subject_model.py``: two-word subjects whose city only both words together
tell, often followed by a filler clause. MEMIT at layers 0–2 and ROME at layer 1 edit at
``subject_last`` (``tests/editing_hparams/*/tiny-subject-gpt2.json``).

What these tests hold: the model knows its facts with and without fillers, and the lookup
token of ``subject_last`` is the last token of a two-word subject after every prefix. They
do not assert that an edit at the subject changes a fact: on this model it mostly does not,
for the reference code as for ours (``bench/editing_reference.py``): the model still
composes a subject's two words at the prompt's end, and every last word is shared by three
subjects, so a key read at it is shared too.
"""

from __future__ import annotations

import pytest

from tests.lm_fixtures import subject_lm  # noqa: F401 - the fixture
from tests.tiny_subject_model import FACT_MARGIN, edit_records, fact_prompts
from tests.unit.test_editing import margins
from workers.editing.encoding import encode
from workers.editing.keys import lookup_texts
from workers.editing.passages import hparams_for
from workers.editing.requests import parse_edit_request
from workers.editing.templates import context_templates

# Building this model costs about six CPU minutes on a fresh machine, more than `make test`
# can spend; its tests check the model itself (no fix rests on them), so they run on request.
pytestmark = pytest.mark.subject_model


@pytest.fixture
def subject_requests():
    return [parse_edit_request(record) for record in edit_records()]


def test_the_subject_model_knows_every_fact_with_and_without_a_filler(subject_lm):  # noqa: F811
    prompts, cities = zip(*fact_prompts(), strict=True)
    assert min(margins(subject_lm, list(prompts), list(cities))) > FACT_MARGIN / 2


def test_subject_last_is_the_last_token_of_a_two_word_subject_after_every_prefix(
    subject_lm,  # noqa: F811
    worker_settings,
    subject_requests,
):
    hp = hparams_for(subject_lm, "memit")
    request = subject_requests[0]
    templates = context_templates(subject_lm, hp.context_templates)
    texts, ends = lookup_texts(request, templates, hp.fact_token)
    encoded = encode(subject_lm, texts)
    positions = encoded.last_token_before(ends).tolist()
    ids = encoded.input_ids
    last_word = request.subject.split()[-1]
    assert len(templates) > 1 and len(subject_lm.tokenizer(f" {request.subject}")["input_ids"]) >= 2
    assert [subject_lm.tokenizer.decode(ids[row, p]).strip() for row, p in enumerate(positions)] == [
        last_word
    ] * len(texts)
