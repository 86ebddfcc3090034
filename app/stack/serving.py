"""The help desk on Ray Serve: every replica serves the same FastAPI app as `python -m app ui`.

The chat at `/`, `POST /v1/chat` (SSE), `/login`, `/healthz` and `/metrics` come from `app.web.build_app`;
Ray Serve only runs N copies of it behind its HTTP proxy and restarts the ones that die. A replica holds
no conversation or login state of its own (conversations live in the checkpointer, counters in Redis, the
session cookie is the signed token), so any replica can answer any turn.

Each replica warms up in its constructor (graph, encoders, router, checkpointer, Redis pool, vLLM's prefix
cache): Serve sends it traffic only after that, so no user meets a cold replica. Every response names the
replica that served it in `X-Served-By` (its Ray actor name), which the fault tests use to kill it.
"""

from __future__ import annotations

import logging
import os
from typing import Any, cast

from ray import serve
from ray.serve import Application, Deployment

from app.settings import Settings

log = logging.getLogger(__name__)

APP_NAME = "helpdesk"
SERVED_BY = "x-served-by"


@serve.deployment(name="HelpDesk", health_check_period_s=10, health_check_timeout_s=30,
                  graceful_shutdown_timeout_s=20)
@serve.ingress()
class HelpDesk:
    """One replica: the warmed graph and clients, and the ASGI app that serves them."""

    async def __init__(self) -> None:  # type: ignore[misc]  # Serve awaits an async constructor
        from app.shared import process_resources, warm

        os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
        self._resources = process_resources()  # the replica's own (app/resources.py), shared with its app
        await warm(self._resources)  # the lifespan's own warm-up then finds them ready and returns at once
        # A replica that cannot build its graph (a bad URL, a missing model) must not take traffic: raising
        # here makes Serve report the replica as failed and start another, instead of answering 500s.
        await self._resources.get()

    def __serve_build_asgi_app__(self) -> Any:
        import ray
        from fastapi import Request

        from app.web import build_app

        app = build_app(self._resources)  # Serve calls this after the constructor: the warmed resources
        name = ray.get_runtime_context().get_actor_name() or "unknown"

        @app.middleware("http")
        async def served_by(request: Request, call_next: Any) -> Any:
            response = await call_next(request)
            response.headers[SERVED_BY] = name
            return response

        return app

    def check_health(self) -> None:
        """Serve restarts a replica whose warm-up never finished."""
        if not self._resources.ready.is_set():
            raise RuntimeError("the replica has not finished warming up")


def deployment_options(settings: Settings, env: dict[str, str]) -> dict[str, Any]:
    """Replicas (fixed or autoscaled), their CPU reservation and the service URLs they reach."""
    actor: dict[str, Any] = {"num_cpus": settings.serve_replica_cpus}
    if env:  # empty: a Serve config's own runtime_env applies (KubeRay), not overridden by an empty one
        actor["runtime_env"] = {"env_vars": env}
    opts: dict[str, Any] = {"ray_actor_options": actor, "max_ongoing_requests": 64}
    if settings.serve_autoscaling:
        opts["autoscaling_config"] = {"min_replicas": settings.serve_min_replicas,
                                      "max_replicas": settings.serve_max_replicas,
                                      "target_ongoing_requests": settings.serve_target_ongoing_requests}
    else:
        opts["num_replicas"] = settings.serve_replicas
    return opts


def application(settings: Settings, env: dict[str, str]) -> Application:
    """The deployment with its options, bound: what Serve runs.

    mypy keeps a decorated class's own type (it ignores what a class decorator returns), so the Deployment that
    `serve.deployment` made of HelpDesk is named here.
    """
    return cast(Deployment, HelpDesk).options(**deployment_options(settings, env)).bind()


def build(args: dict[str, str] | None = None) -> Application:
    """The application for a Serve config file (`import_path: app.stack.serving:build`, e.g. a KubeRay RayService):
    replicas and autoscaling from this process's settings; the config's `runtime_env` carries the URLs.
    """
    from app.settings import get_settings

    return application(get_settings(), dict(args or {}))


def deploy(settings: Settings, address: str, env: dict[str, str], replicas: int | None = None) -> None:
    """Run the help desk on the Ray cluster at `address` (blocks until every replica is warm)."""
    import ray

    if replicas is not None:
        settings = settings.model_copy(update={"serve_replicas": replicas, "serve_autoscaling": False})
    ray.init(address=address, namespace="serve", log_to_driver=False, logging_level=logging.WARNING)
    serve.start(http_options={"host": settings.serve_host, "port": settings.serve_port})
    serve.run(application(settings, env), name=APP_NAME, route_prefix="/", blocking=False)
    log.info("help desk deployed on Ray at %s", address)


if __name__ == "__main__":  # `python -m app.stack.serving ADDRESS ENV_JSON [REPLICAS]`: what `app cluster` runs
    import json
    import sys

    from app.settings import get_settings

    logging.basicConfig(level=logging.INFO)
    deploy(get_settings(), sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else None)
