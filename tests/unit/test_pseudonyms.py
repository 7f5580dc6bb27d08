"""Pseudonyms: keyed by the salt, never the raw id, cached within a bound."""

from annotation.services.pseudonyms import PseudonymCache, pseudonym


def test_pseudonym_depends_on_salt_and_identity_and_hides_the_id():
    a = pseudonym("salt-a", source="prolific", platform_worker_id="PID1", public_id="p1")
    assert a.startswith("p") and len(a) == 17 and "PID1" not in a
    assert a != pseudonym("salt-b", source="prolific", platform_worker_id="PID1", public_id="p1")
    assert a != pseudonym("salt-a", source="mturk", platform_worker_id="PID1", public_id="p1")
    # organic participants have no crowd id: their public id is the identity
    assert pseudonym("s", source="organic", platform_worker_id="", public_id="abc") != pseudonym(
        "s", source="organic", platform_worker_id="", public_id="abd"
    )


def test_cache_stays_within_its_bound():
    cache = PseudonymCache("salt", limit=3)
    names = [cache.get(n, "lab", f"w{n}", f"p{n}") for n in range(10)]
    assert len(cache._known) <= 3
    assert names[9] == pseudonym("salt", source="lab", platform_worker_id="w9", public_id="p9")
