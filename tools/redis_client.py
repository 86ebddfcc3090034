"""One way to reach Redis from a URL: a single server, or a Redis Cluster named `redis+cluster://h:p[,h:p...]`.

The scheme is the one the `limits` library (the rate limiter) reads, so one REDIS_URL serves both. On a
cluster every command goes to the shard that owns its key (redis-py's cluster client follows MOVED and
refreshes the slot map); keys a command or transaction touches together share a `{hash tag}`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")


def is_cluster(url: str) -> bool:
    """True for a `redis+cluster://` URL."""
    return urlsplit(url).scheme in CLUSTER_SCHEMES


def startup_nodes(url: str) -> list[tuple[str, int]]:
    """The host:port pairs of a cluster URL (any one is enough to discover the rest)."""
    netloc = urlsplit(url).netloc.rsplit("@", 1)[-1]
    nodes = []
    for part in netloc.split(","):
        host, _, port = part.strip().rpartition(":")
        nodes.append((host or "127.0.0.1", int(port or 6379)))
    return nodes


def async_redis(url: str, **kwargs: Any) -> Any:
    """An asyncio client: `redis.asyncio.Redis`, or `RedisCluster` for a cluster URL."""
    if is_cluster(url):
        from redis.asyncio.cluster import ClusterNode, RedisCluster

        for key in ("health_check_interval", "retry_on_timeout"):  # single-server options; the cluster client
            kwargs.pop(key, None)                                   # retries and refreshes its slot map itself
        return RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in startup_nodes(url)],
                            ssl=url.startswith("rediss"), **kwargs)
    from redis.asyncio import Redis

    return Redis.from_url(url, **kwargs)


def sync_redis(url: str, **kwargs: Any) -> Any:
    """A blocking client (health checks, tests): `redis.Redis`, or `RedisCluster` for a cluster URL."""
    if is_cluster(url):
        from redis.cluster import ClusterNode, RedisCluster

        return RedisCluster(startup_nodes=[ClusterNode(h, p) for h, p in startup_nodes(url)],
                            ssl=url.startswith("rediss"), **kwargs)
    import redis

    return redis.Redis.from_url(url, **kwargs)
