"""`python -m app cluster up|down|status`: the scaled-out stack on one machine, on existing engines.

What it runs, each reused when it already answers and waited on by its health check:

- the single-process services (`app.services`): Redis, the demo backend, the first vLLM server;
- more vLLM servers on the next ports, behind vLLM's router (`vllm-router`, policy `cache_aware`): the
  app's `VLLM_BASE_URL` is the router's, so a prompt prefix keeps landing where it is cached;
- a Redis Cluster of 3 masters (the same redis-server binary in cluster mode, slots assigned here) for the
  replicas' caches and counters; the single Redis stays the demo backend's (its knowledge-base index);
- PostgreSQL (Debian's server, run as its `postgres` user; data under `.run/postgres`) for the
  conversations, shared by every replica through LangGraph's `AsyncPostgresSaver`;
- a Ray head on this machine and the help desk deployed on it by Ray Serve (`app.serving`), N replicas
  behind Serve's HTTP proxy.

On a real cluster the same deployment runs on KubeRay with managed Postgres and Redis and GPU vLLM nodes;
`docs/scale-out.md` says how. Nothing here is a cluster layer of our own: Ray restarts replicas, the
router balances vLLM, Redis Cluster shards the cache, Postgres holds conversations.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import httpx
import redis

from app import services
from app.services import ServiceError, Status, _log, _spawn, _wait
from app.settings import ROOT, Settings

log = logging.getLogger(__name__)

VENV_BIN = Path(sys.executable).parent


# ---------------------------------------------------------------- vLLM servers and their router
def vllm_settings(settings: Settings, i: int) -> Settings:
    """The i-th local vLLM server's settings (server 0 is the single-process one)."""
    return settings.model_copy(update={"vllm_port": settings.vllm_port + i, "vllm_base_url": None})


def vllm_name(i: int) -> str:
    """Pid and log name of the i-th vLLM server."""
    return "vllm" if i == 0 else f"vllm-{i + 1}"


def router_url(settings: Settings) -> str:
    """The router in front of the vLLM servers, without the /v1 suffix."""
    return f"http://127.0.0.1:{settings.cluster_vllm_router_port}"


def check_router(settings: Settings) -> Status:
    """The router answers and lists the served model (it forwards /v1/models to a healthy server)."""
    st = Status("vllm-router", router_url(settings) + "/v1", False, version="vllm-router",
                replicas=settings.cluster_vllm_servers)
    try:
        models = [m["id"] for m in httpx.get(router_url(settings) + "/v1/models", timeout=3).json()["data"]]
        st.healthy = settings.vllm_model in models
        st.detail = f"policy {settings.cluster_vllm_router_policy}; models: {', '.join(models)}"
    except Exception as exc:  # noqa: BLE001 - any failure is "not healthy"
        st.detail = f"not reachable: {exc}"
    return st


def start_router(settings: Settings) -> Status:
    """Start vLLM's router in front of the local vLLM servers unless it already answers."""
    if (st := check_router(settings)).healthy:
        return st
    workers = [f"http://127.0.0.1:{settings.vllm_port + i}" for i in range(settings.cluster_vllm_servers)]
    cmd = [str(VENV_BIN / "vllm-router"), "--host", "127.0.0.1", "--port", str(settings.cluster_vllm_router_port),
           "--policy", settings.cluster_vllm_router_policy, "--worker-urls", *workers,
           # A dead server: after 3 refused connections its circuit opens and the retries (5, from 100 ms
           # apart) go to the other one, so only the requests it was generating fail (the default of 10
           # failures let requests that arrived after the crash use up their retries on it).
           "--cb-failure-threshold", "3", "--retry-max-retries", "5", "--retry-initial-backoff-ms", "100",
           "--health-check-interval-secs", "2", "--health-failure-threshold", "2", "--log-level", "warning"]
    proc = _spawn(settings, "vllm-router", cmd)
    return _wait("vllm-router", proc, lambda: check_router(settings), 60, _log(settings, "vllm-router"))


# ---------------------------------------------------------------- Redis Cluster
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


# ---------------------------------------------------------------- PostgreSQL
def pg_dir(settings: Settings) -> Path:
    """The local Postgres's folder: data, socket and log (owned by the postgres user)."""
    return settings.run_dir / "postgres"


def _as_postgres(cmd: list[str]) -> subprocess.CompletedProcess:
    """Postgres refuses to run as root: run its tools as the `postgres` user Debian's package made."""
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def check_postgres(settings: Settings) -> Status:
    """Postgres accepts a connection to the help desk database."""
    st = Status("postgres", settings.postgres_url.replace("postgres@", "postgres:***@"), False)
    try:
        import psycopg

        with psycopg.connect(settings.postgres_url, connect_timeout=2) as conn:
            st.version = str(conn.execute("show server_version").fetchone()[0])
        st.healthy, st.detail = True, f"data in {pg_dir(settings) / 'data'}"
    except Exception as exc:  # noqa: BLE001
        st.detail = f"not reachable: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}"
    return st


def start_postgres(settings: Settings) -> Status:
    """Initialise the data directory once, start the server on loopback and create the database."""
    if (st := check_postgres(settings)).healthy:
        return st
    pg_bin = settings.postgres_bin
    if not (pg_bin / "postgres").exists():
        raise ServiceError(f"PostgreSQL is not installed at {pg_bin}; run `make setup` (Debian's postgresql)")
    root, data = pg_dir(settings), pg_dir(settings) / "data"
    root.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "postgres:postgres", str(root)], check=True)
    if not (data / "PG_VERSION").exists():
        out = _as_postgres([str(pg_bin / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres", "-E", "UTF8",
                            "--no-instructions"])
        if out.returncode:
            raise ServiceError(f"postgres initdb failed: {out.stderr.strip()[-500:]}")
    opts = f"-p {settings.postgres_port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=200"
    out = _as_postgres([str(pg_bin / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(root / "postgres.log"),
                        "-w", "-t", "60", "start"])
    if out.returncode:
        raise ServiceError(f"postgres did not start: {out.stdout.strip()[-300:]} see {root / 'postgres.log'}")
    import psycopg

    admin = settings.postgres_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("select 1 from pg_database where datname = 'helpdesk'").fetchone():
            conn.execute("create database helpdesk")
    return check_postgres(settings)


def stop_postgres(settings: Settings, mode: str = "fast") -> bool:
    """Stop the local Postgres (fast: roll back open transactions); False when it was not running."""
    data = pg_dir(settings) / "data"
    if not (data / "postmaster.pid").exists():
        return False
    _as_postgres([str(settings.postgres_bin / "pg_ctl"), "-D", str(data), "-m", mode, "-w", "stop"])
    return True


# ---------------------------------------------------------------- Ray and the Serve deployment
def ray_address(settings: Settings) -> str:
    """The Ray cluster's GCS address."""
    return settings.ray_address or f"127.0.0.1:{settings.ray_port}"


def serve_url(settings: Settings) -> str:
    """Ray Serve's HTTP proxy: the chat and the API."""
    return f"http://{settings.serve_host}:{settings.serve_port}"


def _ray(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    return subprocess.run([str(VENV_BIN / "ray"), *args], capture_output=True, text=True, timeout=timeout,
                          env=env, check=False)


def check_ray(settings: Settings) -> Status:
    """Ray's GCS accepts connections at its address (`ray status` would retry for minutes on a dead one)."""
    st = Status("ray", ray_address(settings), False, managed=not settings.ray_address)
    host, _, port = ray_address(settings).rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            st.healthy, st.detail = True, "GCS reachable"
    except OSError as exc:
        st.detail = f"not reachable: {exc}"
    return st


def start_ray(settings: Settings) -> Status:
    """Start a Ray head on this machine unless RAY_ADDRESS names a running cluster."""
    if (st := check_ray(settings)).healthy:
        return st
    if settings.ray_address:
        raise ServiceError(f"Ray at {settings.ray_address}: {st.detail}")
    # Ray's worker ports stay clear of the project's services (Redis 16379, vLLM 18000+, ...).
    out = _ray(["start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(settings.ray_port),
                "--num-cpus", str(os.cpu_count() or 2), "--min-worker-port", "30000", "--max-worker-port", "30999",
                "--include-dashboard=false", "--object-store-memory", str(300 * 2**20), "--disable-usage-stats"])
    if out.returncode:
        raise ServiceError(f"ray start failed: {out.stderr.strip()[-500:]}")
    return check_ray(settings)


def replica_env(settings: Settings) -> dict[str, str]:
    """What each replica reaches, by URL only: the router, the Redis Cluster (tool cache, profile cache,
    next-turn counts, rate limits), the backend (with its own Redis for the knowledge base), Postgres.
    """
    llm = router_url(settings) + "/v1" if settings.local_vllm else settings.llm_url
    env = {"VLLM_BASE_URL": llm, "REDIS_URL": settings.redis_cluster_url, "BACKEND_URL": settings.backend,
           "DATABASE_URL": settings.database_url or settings.postgres_url, "RUN_DIR": str(settings.run_dir),
           "CACHE_DIR": str(settings.cache_dir), "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    for key in ("VLLM_MODEL", "VLLM_API_KEY", "EMBEDDING_MODEL", "TORCH_THREADS", "LANGSMITH_TRACING",
                "LANGSMITH_API_KEY", "LANGSMITH_PROJECT", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def check_serve(settings: Settings) -> Status:
    """The help desk behind Serve says ready (a replica answered /healthz after warming)."""
    st = Status("serve", serve_url(settings), False)
    try:
        r = httpx.get(serve_url(settings) + "/healthz", timeout=3)
        st.healthy = r.status_code == 200 and r.json().get("ready") is True
        st.detail = "ready" if st.healthy else f"/healthz {r.status_code}"
    except Exception as exc:  # noqa: BLE001
        st.detail = f"not reachable: {exc}"
    return st


def deploy(settings: Settings, replicas: int | None = None) -> Status:
    """Deploy (or redeploy with another replica count) the help desk on Ray Serve; waits until it is ready."""
    args = [sys.executable, "-m", "app.serving", ray_address(settings), json.dumps(replica_env(settings))]
    if replicas is not None:
        args.append(str(replicas))
    logfile = _log(settings, "serve-deploy")
    with open(logfile, "ab") as out:
        done = subprocess.run(args, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, timeout=600, check=False)
    if done.returncode:
        raise ServiceError(f"the Serve deployment failed; see {logfile}")
    deadline = time.monotonic() + 300
    while not (st := check_serve(settings)).healthy and time.monotonic() < deadline:
        time.sleep(1)
    if not st.healthy:
        raise ServiceError(f"the help desk on Ray Serve did not become ready: {st.detail}; see {logfile}")
    st.replicas = replica_count(settings)
    return st


def _on_ray(settings: Settings, body: str, *args: str) -> subprocess.CompletedProcess:
    """Run a few lines against the Ray cluster in a short-lived driver (this process never joins Ray)."""
    code = (f"import ray, sys\nfrom ray import serve\nray.init(address={ray_address(settings)!r}, namespace='serve', "
            f"logging_level='ERROR', log_to_driver=False)\n{body}")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60,
                          check=False)


def replica_count(settings: Settings) -> int:
    """Running replicas of the help desk, as Serve's controller counts them."""
    out = _on_ray(settings, "app = serve.status().applications.get('helpdesk')\n"
                            "print(app.deployments['HelpDesk'].replica_states.get('RUNNING', 0) if app else 0)")
    try:
        return int(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return 0


# ---------------------------------------------------------------- the whole stack
def up(settings: Settings, replicas: int | None = None, redeploy: bool = False) -> list[Status]:
    """Bring up every component in dependency order, reusing what already runs (a ready deployment with the
    wanted replica count too, unless `redeploy`: a rolling update, e.g. after a code change).
    """
    settings.run_dir.mkdir(parents=True, exist_ok=True)
    statuses = services.up(settings)
    if settings.local_vllm:
        for i in range(1, settings.cluster_vllm_servers):
            statuses.append(services.start_vllm(vllm_settings(settings, i), vllm_name(i)))
            statuses[-1].name = vllm_name(i)
        statuses.append(start_router(settings))
    statuses.append(start_redis_cluster(settings))
    statuses.append(start_postgres(settings))
    statuses.append(start_ray(settings))
    serving = check_serve(settings)
    want = replicas or (None if settings.serve_autoscaling else settings.serve_replicas)
    if serving.healthy and not redeploy and (want is None or replica_count(settings) == want):
        serving.replicas = replica_count(settings)
        statuses.append(serving)
    else:
        statuses.append(deploy(settings, replicas))
    return statuses


def kill_replica(settings: Settings, actor_name: str) -> None:
    """Kill one replica through Ray's API (what a crashed process looks like); Serve starts a replacement."""
    out = _on_ray(settings, "ray.kill(ray.get_actor(sys.argv[1], namespace='serve'), no_restart=True)", actor_name)
    if out.returncode:
        raise ServiceError(f"could not kill replica {actor_name}: {out.stderr.strip()[-300:]}")


def restart_postgres(settings: Settings) -> Status:
    """Stop Postgres (fast: open transactions roll back) and start it again on the same data."""
    stop_postgres(settings)
    return start_postgres(settings)


def down(settings: Settings, keep_services: bool = False) -> list[str]:
    """Stop what `up` started beyond the single-process services, then those too (unless `keep_services`)."""
    stopped = []
    if not settings.ray_address and check_ray(settings).healthy:
        _ray(["stop", "--force"])
        stopped.append("ray")
    if stop_postgres(settings):
        stopped.append("postgres")
    stopped += stop_redis_cluster(settings)
    for name in ["vllm-router", *(vllm_name(i) for i in range(1, settings.cluster_vllm_servers))]:
        if services.stop(settings, name):
            stopped.append(name)
    return stopped if keep_services else stopped + services.down(settings)


def status(settings: Settings) -> list[Status]:
    """Health of every tier, with replica counts."""
    statuses = [services.check_redis(settings), services.check_backend(settings)]
    for i in range(settings.cluster_vllm_servers if settings.local_vllm else 1):
        st = services.check_vllm(vllm_settings(settings, i) if settings.local_vllm else settings)
        st.name = vllm_name(i)
        statuses.append(st)
    if settings.local_vllm:
        statuses.append(check_router(settings))
    statuses += [check_redis_cluster(settings), check_postgres(settings), check_ray(settings), check_serve(settings)]
    if statuses[-1].healthy:
        statuses[-1].replicas = replica_count(settings)
    return statuses


def as_json(statuses: list[Status]) -> str:
    """`cluster status --json` output."""
    return json.dumps({"healthy": all(s.healthy for s in statuses), "components": [asdict(s) for s in statuses]},
                      indent=2)
