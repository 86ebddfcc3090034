"""The local Redis Cluster: 3 masters from the same redis-server binary in cluster mode, slots assigned here.

`app.stack.cluster` starts it for the replicas' caches and counters (`REDIS_URL=redis+cluster://...`). A master that
stops takes only its own slots away (`cluster-require-full-coverage no`); its `nodes.conf` keeps its id and
slots, so starting it again rejoins the same slots, empty (it is a cache: no persistence).
"""

from __future__ import annotations

import time

import redis

from app.settings import Settings
from app.stack import services
from app.stack.services import ServiceError, Status, _log, _spawn, _wait

SLOTS = 16384


def cluster_ports(settings: Settings) -> list[int]:
    """The local Redis Cluster's master ports."""
    return [int(p) for p in settings.redis_cluster_ports.split(",") if p.strip()]


def redis_node_name(port: int) -> str:
    """Pid and log name of one Redis Cluster master."""
    return f"redis-cluster-{port}"


def check_redis_cluster(settings: Settings) -> Status:
    """Every slot is served: `cluster_state:ok` on a node, and which masters answer."""
    st = Status("redis-cluster", settings.redis_cluster_url, False, replicas=len(cluster_ports(settings)))
    up, state = [], ""
    for port in cluster_ports(settings):
        try:
            info = redis.Redis(port=port, socket_timeout=2, socket_connect_timeout=1).cluster("info")
            up.append(port)
            state = state or str(info.get("cluster_state"))
            st.version = st.version or f"{info.get('cluster_slots_assigned')} slots assigned"
        except Exception:  # noqa: BLE001 - a master that does not answer is listed as down
            continue
    st.healthy = state == "ok" and len(up) == len(cluster_ports(settings))
    st.detail = f"cluster_state:{state or 'unreachable'}; masters up: {', '.join(map(str, up)) or 'none'}"
    return st


def start_redis_node(settings: Settings, port: int) -> None:
    """Start one master in cluster mode (a cache: no persistence; its nodes.conf keeps its id and slots)."""
    folder = settings.run_dir / "redis-cluster" / str(port)
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [services._redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
           "--dir", str(folder), "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
           "--cluster-node-timeout", "3000",
           # A master that is down takes only its own slots away: the others keep serving theirs.
           "--cluster-require-full-coverage", "no", "--cluster-allow-reads-when-down", "yes"]
    proc = _spawn(settings, redis_node_name(port), cmd)

    def answers() -> Status:
        ok = Status(redis_node_name(port), f"redis://127.0.0.1:{port}", False)
        try:
            ok.healthy = bool(redis.Redis(port=port, socket_timeout=1).ping())
        except Exception:  # noqa: BLE001
            pass
        return ok

    _wait(redis_node_name(port), proc, answers, 30, _log(settings, redis_node_name(port)))


def start_redis_cluster(settings: Settings) -> Status:
    """Three masters from the same redis-server binary, slots split evenly by the project, joined by MEET."""
    if (st := check_redis_cluster(settings)).healthy:
        return st
    ports = cluster_ports(settings)
    for port in ports:
        try:
            redis.Redis(port=port, socket_timeout=1).ping()
        except redis.ConnectionError:
            start_redis_node(settings, port)
    nodes = [redis.Redis(port=p, socket_timeout=5) for p in ports]
    if int(nodes[0].cluster("info").get("cluster_slots_assigned", 0)) < SLOTS:
        bounds = [SLOTS * i // len(ports) for i in range(len(ports) + 1)]
        for i, node in enumerate(nodes):
            if not int(node.cluster("info").get("cluster_slots_assigned", 0)):
                node.execute_command("CLUSTER", "ADDSLOTSRANGE", bounds[i], bounds[i + 1] - 1)
        for port in ports[1:]:
            nodes[0].execute_command("CLUSTER", "MEET", "127.0.0.1", port)
    deadline = time.monotonic() + 30
    while not (st := check_redis_cluster(settings)).healthy:
        if time.monotonic() > deadline:
            raise ServiceError(f"the Redis Cluster did not form: {st.detail}; see {_log(settings, 'redis-cluster-*')}")
        time.sleep(0.2)
    return st


def stop_redis_cluster(settings: Settings) -> list[str]:
    """Stop the masters this project started (their nodes.conf stays, so a restart rejoins the same slots)."""
    return [redis_node_name(p) for p in cluster_ports(settings) if services.stop(settings, redis_node_name(p))]
