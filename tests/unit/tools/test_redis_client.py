from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from tools.cache import cache_key
from tools.redis_client import async_redis, is_cluster, startup_nodes
from tools.registry import TOOLS


def test_cluster_urls_name_every_startup_node():
    url = "redis+cluster://10.0.0.1:7000,10.0.0.2:7001,cache-3:7002"
    assert is_cluster(url) and not is_cluster("redis://127.0.0.1:6379/0")
    assert startup_nodes(url) == [("10.0.0.1", 7000), ("10.0.0.2", 7001), ("cache-3", 7002)]
    assert startup_nodes("redis+cluster://user:pw@h:6380") == [("h", 6380)]


def test_the_client_follows_the_url():
    # Options only a single server takes are dropped for the cluster client rather than refused.
    single = async_redis("redis://127.0.0.1:1/0", socket_timeout=1, health_check_interval=10, retry_on_timeout=False)
    clustered = async_redis("redis+cluster://127.0.0.1:1", socket_timeout=1, health_check_interval=10,
                            retry_on_timeout=False)
    assert isinstance(single, Redis) and isinstance(clustered, RedisCluster)


def test_a_similarity_tools_vector_set_and_entries_share_a_hash_tag():
    key = cache_key(TOOLS["kb_search"], {"query": "hotel limit"}, "E1001")
    tag = key[key.index("{") + 1:key.index("}")]
    assert f"{{{tag}}}" in key + ":v" and f"{{{tag}}}" in key + ":e:0123"
    other = cache_key(TOOLS["salary"], {"employee_id": "E1001", "month": "2026-03"}, "E1001")
    assert other[other.index("{"):] != key[key.index("{"):]  # different tools, different tags (spread)
