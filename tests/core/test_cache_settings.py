"""Django's cache is shared through Redis when Redis is configured, per process otherwise."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.core.cache import cache

from config.settings.base import cache_settings


def test_it_uses_redis_for_a_redis_url_and_memory_otherwise():
    redis = cache_settings("redis://127.0.0.1:6379/6")["default"]
    assert redis["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    assert redis["LOCATION"] == "redis://127.0.0.1:6379/6"
    local = cache_settings("filesystem://")["default"]
    assert local["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"


def test_the_test_settings_share_entries_through_the_real_redis():
    import redis

    assert settings.CACHES["default"]["BACKEND"].endswith("RedisCache")
    key = f"probe-{uuid.uuid4().hex}"
    cache.set(key, {"vector": [1.0, 2.0]}, timeout=30)
    # Another process would see it: read it straight from Redis, not through this process.
    raw = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
    assert any(key in k.decode() for k in raw.keys(f"*{key}*"))
    assert cache.get(key) == {"vector": [1.0, 2.0]}
    cache.delete(key)
