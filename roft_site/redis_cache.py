"""Django's Redis cache with one Redis client per connection pool, made once, that degrades
instead of failing when Redis is down.

Django's ``RedisCacheClient`` builds a new ``redis.Redis`` object for every cache call; a
session read, a rate-limit count and a session write each paid for one on every
participant request. A ``redis.Redis`` client is safe to share between threads (each
command takes a connection from the pool), so one per pool does the same work.

When Redis does not answer, every cache call behaves as for an empty cache that keeps
nothing (a read misses, a write is dropped) instead of raising, so requests go on without
it: sessions (``cached_db``) are read from and written to the database, and the rate
limits count nothing until Redis is back. After a failure Redis is not asked again for
``DOWN_RETRY_SECONDS``, so an outage costs each request no connection attempt. ``/healthz``
asks Redis itself (``redis_is_up``) and reports it down.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)

DOWN_RETRY_SECONDS = 5.0
UNAVAILABLE = (RedisConnectionError, RedisTimeoutError, OSError)


class SharedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}
        self._down_until = 0.0

    def get_client(self, key=None, *, write=False):
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = self._client(connection_pool=self._get_connection_pool(write))
        return client

    def _or(self, fallback: Callable[[], Any], call: Callable[[], Any]) -> Any:
        """``call()``, or ``fallback()`` while Redis is down (and for a while after it failed)."""
        if time.monotonic() < self._down_until:
            return fallback()
        try:
            return call()
        except UNAVAILABLE as exc:
            if not self._down_until:
                log.warning("Redis cache unavailable, going on without it: %s", exc)
            self._down_until = time.monotonic() + DOWN_RETRY_SECONDS
            return fallback()

    def is_up(self) -> bool:
        """Whether Redis answers a PING now (asked even while marked down)."""
        try:
            up = bool(self.get_client().ping())
        except UNAVAILABLE:
            up = False
        self._down_until = 0.0 if up else time.monotonic() + DOWN_RETRY_SECONDS
        return up

    def add(self, key, value, timeout):
        return self._or(
            lambda: False, lambda: super(SharedClientRedisCacheClient, self).add(key, value, timeout)
        )

    def get(self, key, default):
        return self._or(lambda: default, lambda: super(SharedClientRedisCacheClient, self).get(key, default))

    def set(self, key, value, timeout):
        return self._or(
            lambda: None, lambda: super(SharedClientRedisCacheClient, self).set(key, value, timeout)
        )

    def touch(self, key, timeout):
        return self._or(lambda: False, lambda: super(SharedClientRedisCacheClient, self).touch(key, timeout))

    def delete(self, key):
        return self._or(lambda: False, lambda: super(SharedClientRedisCacheClient, self).delete(key))

    def get_many(self, keys):
        return self._or(dict, lambda: super(SharedClientRedisCacheClient, self).get_many(keys))

    def has_key(self, key):
        return self._or(lambda: False, lambda: super(SharedClientRedisCacheClient, self).has_key(key))

    def incr(self, key, delta):
        def missing():
            raise ValueError(f"Key '{key}' not found.")  # what the cache says of a missing key

        return self._or(missing, lambda: super(SharedClientRedisCacheClient, self).incr(key, delta))

    def set_many(self, data, timeout):
        return self._or(list, lambda: super(SharedClientRedisCacheClient, self).set_many(data, timeout))

    def delete_many(self, keys):
        return self._or(lambda: None, lambda: super(SharedClientRedisCacheClient, self).delete_many(keys))

    def clear(self):
        return self._or(lambda: False, lambda: super(SharedClientRedisCacheClient, self).clear())


class SharedClientRedisCache(RedisCache):
    """The ``CACHES`` backend: ``roft_site.redis_cache.SharedClientRedisCache``."""

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = SharedClientRedisCacheClient


def redis_is_up(cache) -> bool | None:
    """Whether the cache's Redis answers; None when the cache is not Redis (no Redis to ask)."""
    if not isinstance(cache, SharedClientRedisCache):
        return None
    return cache._cache.is_up()
