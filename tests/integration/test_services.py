import json
import subprocess
import sys

from app.settings import ROOT


def test_status_json_shows_every_component_healthy(running):
    out = subprocess.run([sys.executable, "-m", "app", "services", "status", "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    by_name = {c["name"]: c for c in status["components"]}
    assert status["healthy"] and set(by_name) == {"vllm", "redis", "backend", "embeddings"}
    assert int(by_name["redis"]["version"].split(".")[0]) >= 8
    assert "smollm2-135m" in by_name["vllm"]["detail"]
    assert by_name["embeddings"]["version"] == "dim=384"


def test_services_up_is_idempotent(settings, running):
    from app import services

    again = services.up(settings)
    assert [s.healthy for s in again] == [True, True, True]
