from ray.serve import Application

from app.settings import Settings
from app.stack.cluster import replica_env, vllm_name, vllm_settings
from app.stack.serving import build, deployment_options


def test_replicas_reach_every_tier_by_url_only():
    settings = Settings(_env_file=None)
    env = replica_env(settings)
    assert env["VLLM_BASE_URL"] == f"http://127.0.0.1:{settings.cluster_vllm_router_port}/v1"  # the router
    assert env["REDIS_URL"].startswith("redis+cluster://") and env["DATABASE_URL"].startswith("postgresql://")
    assert env["BACKEND_URL"] == settings.backend
    external = Settings(_env_file=None, vllm_base_url="http://gpu:8000/v1", database_url="postgresql://h/db")
    assert replica_env(external)["VLLM_BASE_URL"] == "http://gpu:8000/v1"  # no local router in front of it
    assert replica_env(external)["DATABASE_URL"] == "postgresql://h/db"


def test_vllm_servers_take_consecutive_ports_and_names():
    settings = Settings(_env_file=None)
    assert [vllm_settings(settings, i).vllm_port for i in range(3)] == [settings.vllm_port + i for i in range(3)]
    assert [vllm_name(i) for i in range(3)] == ["vllm", "vllm-2", "vllm-3"]


def test_fixed_or_autoscaled_replicas_from_settings():
    fixed = deployment_options(Settings(_env_file=None, serve_replicas=3), {"A": "1"})
    assert fixed["num_replicas"] == 3 and "autoscaling_config" not in fixed
    assert fixed["ray_actor_options"]["runtime_env"]["env_vars"] == {"A": "1"}
    auto = deployment_options(Settings(_env_file=None, serve_autoscaling=True, serve_min_replicas=2,
                                       serve_max_replicas=6), {})
    assert "num_replicas" not in auto
    assert auto["autoscaling_config"]["min_replicas"] == 2 and auto["autoscaling_config"]["max_replicas"] == 6


def test_a_serve_config_can_import_the_application():
    assert isinstance(build(), Application)  # what `import_path: app.stack.serving:build` gives Serve
    assert "runtime_env" not in deployment_options(Settings(_env_file=None), {})["ray_actor_options"]
