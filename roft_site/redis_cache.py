"""Django's Redis cache with one Redis client per connection pool, made once.

Django's ``RedisCacheClient`` builds a new ``redis.Redis`` object for every cache call; a
session read, a rate-limit count and a session write each paid for one on every
participant request. A ``redis.Redis`` client is safe to share between threads (each
command takes a connection from the pool), so one per pool does the same work.
"""

from __future__ import annotations

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class SharedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = self._client(connection_pool=self._get_connection_pool(write))
        return client


class SharedClientRedisCache(RedisCache):
    """The ``CACHES`` backend: ``roft_site.redis_cache.SharedClientRedisCache``."""

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = SharedClientRedisCacheClient
