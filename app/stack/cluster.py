"""`python -m app cluster up|down|status`: the scaled-out stack on one machine, on existing engines.

What it runs, each reused when it already answers and waited on by its health check:

- the single-process services (`app.stack.services`): Redis, the demo backend, the first vLLM server;
- more vLLM servers on the next ports, behind vLLM's router (`vllm-router`, policy `cache_aware`): the
  app's `VLLM_BASE_URL` is the router's, so a prompt prefix keeps landing where it is cached;
- a Redis Cluster of 3 masters (`app.stack.redis_cluster`) for the replicas' caches and counters; the single
  Redis stays the demo backend's (its knowledge-base index);
- PostgreSQL (`app.stack.postgres`: Debian's server, run as its `postgres` user; data under `.run/postgres`) for the
  conversations, shared by every replica through LangGraph's `AsyncPostgresSaver`;
- a Ray head on this machine and the help desk deployed on it by Ray Serve (`app.stack.serving`), N replicas
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

from app.settings import ROOT, Settings
from app.stack import services
from app.stack.postgres import check_postgres, start_postgres, stop_postgres
from app.stack.redis_cluster import check_redis_cluster, start_redis_cluster, stop_redis_cluster
from app.stack.services import ServiceError, Status, _log, _spawn, _wait

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
                "LANGSMITH_API_KEY", "LANGSMITH_PROJECT", "OTEL_EXPORTER_OTLP_ENDPOINT", "LLM_DRAFTS"):
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
    args = [sys.executable, "-m", "app.stack.serving", ray_address(settings), json.dumps(replica_env(settings))]
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
    running = replica_count(settings) if serving.healthy and not redeploy else 0
    if running and (want is None or running == want):
        serving.replicas = running
        statuses.append(serving)
    else:
        statuses.append(deploy(settings, replicas))
    return statuses


def kill_replica(settings: Settings, actor_name: str) -> None:
    """Kill one replica through Ray's API (what a crashed process looks like); Serve starts a replacement."""
    out = _on_ray(settings, "ray.kill(ray.get_actor(sys.argv[1], namespace='serve'), no_restart=True)", actor_name)
    if out.returncode:
        raise ServiceError(f"could not kill replica {actor_name}: {out.stderr.strip()[-300:]}")


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
