"""Shared fixtures: studies built through the real loading service, participants, clients."""

from __future__ import annotations

import copy
import gc
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from annotation.models import Participant, Study
from annotation.services.authoring.studies import load_study_file
from tests.factories import ParticipantFactory, researcher_user
from tests.helpers.fake_prolific import TOKEN as FAKE_PROLIFIC_TOKEN
from tests.helpers.fake_prolific import serve as serve_fake_prolific
from tests.tiny_models import ENCODER, MEND_EDITOR, SIM, SUBJECT, TINY, is_built

# Plugins and fixtures that several test modules share, kept with their helpers: a Redis
# database per xdist worker, the transactional tests' quick flush, one Playwright for every
# browser test, the tiny models and worker settings, the gate and worker fixtures.
pytest_plugins = [
    "tests.xdist_env",
    "tests.fast_flush",
    "tests.browser_fixtures",
    "tests.lm_fixtures",
    "tests.helpers.gate",
    "tests.helpers.jobs",
]

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"


# The slowest modules that need no tiny model (a Celery worker killed and taken over, a venv
# without the model stack, twenty guests, the demo game's generator, the fuzzer): collected
# first, so they start while the background build (tests/tiny_models.py) trains the models
# the later tests read, and no long test is left alone at the end while one core idles.
# (xdist's worksteal hands each worker half the list in order and lets an idle one take
# from the other's tail.) From the `--durations` table every run prints.
STARTED_FIRST = (
    "tests/integration/test_jobs_that_lose_their_worker.py",
    "tests/integration/test_web_only_install.py",
    "tests/integration/test_game_passage_order.py",
    "tests/integration/test_demo_game.py",
    "tests/api/test_fuzz_bad_inputs.py",
    "tests/api/test_fuzz_html_forms.py",
)


# The fixtures that hand a test a tiny model, and the model each one waits for.
MODEL_FIXTURES = {
    "tiny_lm_dir": TINY,
    "tiny_mend_dir": MEND_EDITOR,
    "subject_lm": SUBJECT,
    "tiny_sim_registry": SIM,
    "tiny_encoder_dir": ENCODER,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow model-free modules of ``STARTED_FIRST`` first, the rest in collection order,
    and last the tests that need a tiny model the cache lacks yet: with a cold cache, a
    worker that reached one early sat idle until the background build got to its model
    (52 s for the simulation model), while model-free tests were left; at the end of the
    list they run (or are stolen by the other worker) once the build is done."""
    first = {path: rank for rank, path in enumerate(STARTED_FIRST)}
    missing = {fixture for fixture, model in MODEL_FIXTURES.items() if not is_built(model)}

    def order(item: pytest.Item) -> tuple[bool, int]:
        waits = bool(missing.intersection(getattr(item, "fixturenames", ())))
        return waits, first.get(item.nodeid.split("::", 1)[0], len(first))

    where = {id(item): order(item) for item in items}
    items.sort(key=lambda item: where[id(item)])  # stable: the order within a module stays


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move what collection left alive (the imported libraries, torch among them, and the
    collected tests: some 620,000 objects, alive for the whole run) out of the garbage
    collector's reach: every later full collection walked them again. Measured on 1,064
    tests in one process: 4.5 to 3.2 CPU-s of collections (``gc.callbacks``), out of 70."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True, scope="session")
def fast_password_hasher():
    """Passwords hashed with MD5 in the tests: PBKDF2's million rounds cost a third of a
    second per user created or logged in with a password (seconds under load), and the
    permission matrix alone creates several hundred. The tests check who may do what, not
    the hash; PBKDF2 stays listed so a hash made outside the test process still verifies."""
    hashers = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    ]
    with override_settings(PASSWORD_HASHERS=hashers):
        yield


def claim_study_file(*, slug: str = "claims", items: int = 6, attention: int = 0, **fields) -> dict:
    """A claim study file with ``items`` ordinary items and ``attention`` checks."""
    data = {
        "slug": slug,
        "title": "Claims under test",
        "kind": "claim",
        "status": "live",
        "instructions": "Label each claim.",
        "annotations_per_item": 2,
        "items_per_session": 4,
        "completion_code": "DONE-123",
        "screenout_code": "OUT-999",
        "config": {},
        "items": [],
    }
    for index in range(items):
        data["items"].append(
            {
                "external_id": f"c{index}",
                "payload": {
                    "claim": f"Claim number {index} holds.",
                    "sentences": [f"First sentence of passage {index}.", "A second sentence.", "A third."],
                },
                "gold": {"label": "supports", "evidence": [0]},
                "provenance": {"system": "ROME" if index % 2 else "FT"},
            }
        )
    for index in range(attention):
        data["items"].append(
            {
                "external_id": f"attn{index}",
                "attention_check": True,
                "payload": {"claim": "Attention.", "sentences": ["Choose neither.", "Select nothing."]},
                "gold": {"label": "neutral", "evidence": []},
            }
        )
    data.update(fields)
    return data


def logged_in(user) -> Client:
    """A client of its own with ``user`` logged in (pytest-django's ``client`` stays as it was)."""
    client = Client()
    client.force_login(user)
    return client


# The people. ``researcher`` is logged in on pytest-django's ``client``; ``owner`` is a user
# only, with ``owner_client`` a client of its own, for tests that also need an anonymous or
# another person's client. Tests that write their data once per module (``module_rows``) read
# its owner and study through ``module_owner`` and ``module_study``.


@pytest.fixture
def researcher(db, client):
    """Rita, a researcher, logged in on ``client``."""
    user = researcher_user("rita", password="pw")
    client.force_login(user)
    return user


@pytest.fixture
def owner(db):
    """Olga, a researcher who will own the test's study; logged in nowhere."""
    return researcher_user("olga", password="pw")


@pytest.fixture
def owner_client(owner) -> Client:
    """A client of its own logged in as ``owner``."""
    return logged_in(owner)


@pytest.fixture
def superuser(db):
    """An administrator (the admin site's user), logged in nowhere."""
    return get_user_model().objects.create_superuser("root", "root@example.org", "pw-for-tests-only")


@pytest.fixture
def module_owner(module_rows):
    """The owner of the module's study, read afresh for each test. ``module_rows`` is the
    module's own module-scoped fixture: the (owner, study) primary keys of the rows it wrote once
    (tests/helpers/module_data.py)."""
    return get_user_model().objects.get(pk=module_rows[0])


@pytest.fixture
def module_owner_logged_in(module_owner, client):
    """``module_owner``, logged in on ``client``."""
    client.force_login(module_owner)
    return module_owner


@pytest.fixture
def module_study(module_rows) -> Study:
    """The module's study (see ``module_owner``), read afresh for each test (which may change it)."""
    return Study.objects.get(pk=module_rows[1])


@pytest.fixture
def make_claim_study(db):
    def make(**kwargs) -> Study:
        return load_study_file(claim_study_file(**kwargs)).study

    return make


@pytest.fixture
def crowd_study(make_claim_study) -> Study:
    """A live claim study as a crowd platform runs it: six items and two attention checks, three
    pages a session with one of them a check (one failed check screens the person out)."""
    return make_claim_study(items=6, attention=2, items_per_session=3, attention_check_rate=0.34)


@pytest.fixture
def researchers_crowd_study(crowd_study, researcher) -> Study:
    """``crowd_study``, owned by ``researcher``."""
    crowd_study.owner = researcher
    crowd_study.save(update_fields=["owner"])
    return crowd_study


@pytest.fixture
def fake_prolific():
    """The Prolific stand-in (tests/helpers/fake_prolific.py) on a port of its own, and the
    settings that point the client at it with its token (and the site's address, which the
    published study links name). A test may change the settings further
    (``settings.PROLIFIC_API_TOKEN = ""``); held calls are released before the server stops."""
    fake, server = serve_fake_prolific()
    with override_settings(
        PROLIFIC_API_URL=fake.url, PROLIFIC_API_TOKEN=FAKE_PROLIFIC_TOKEN, SITE_URL="https://roft.example"
    ):
        yield fake
    fake.release.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def mturk_stub(monkeypatch):
    """botocore's ``Stubber`` on the MTurk client the platform code gets (sandbox or not): a
    test lists the calls it expects, with their replies; any other call fails, and one
    expected but not made fails at the end. (boto3 is imported here: only these tests pay for it.)"""
    import boto3
    from botocore.stub import Stubber

    from annotation.platforms.mturk import client as mturk_client

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test-secret")
    client = boto3.client("mturk", region_name="us-east-1", endpoint_url=mturk_client.SANDBOX_ENDPOINT)
    monkeypatch.setattr(mturk_client, "mturk_boto_client", lambda *, sandbox: client)
    with Stubber(client) as stubber, override_settings(SITE_URL="https://roft.example"):
        yield stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def example_study_file():
    def read(kind: str) -> dict:
        return copy.deepcopy(json.loads((EXAMPLES / f"{kind}.json").read_text()))

    return read


@pytest.fixture
def enrolled(db):
    """A consented participant in a study (as after the entry and consent pages)."""

    def make(study: Study, **fields) -> Participant:
        return ParticipantFactory(enrolled_in=study, **fields)

    return make
