"""The Redis cache makes one client per connection pool, not one per call."""

from django.conf import settings

from roft_site.redis_cache import SharedClientRedisCache


def test_one_redis_client_serves_every_call():
    cache = SharedClientRedisCache(settings.REDIS_URL, {"KEY_PREFIX": "test-redis-cache"})
    client = cache._cache.get_client("a", write=True)
    assert cache._cache.get_client("b") is client
    cache.set("key", {"value": 1}, 30)
    assert cache.get("key") == {"value": 1}
    cache.delete("key")
    assert cache.get("key") is None


def test_the_site_uses_it_when_redis_is_configured():
    assert settings.CACHES["default"]["BACKEND"] == "roft_site.redis_cache.SharedClientRedisCache"
