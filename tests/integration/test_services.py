import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

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


def _cores_busy(pgid: int, seconds: float) -> float:
    """CPU used by a process group over `seconds`, in cores (from each thread's scheduler statistics)."""
    def used() -> int:
        total = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                if int(stat.read_text().rsplit(")", 1)[1].split()[2]) != pgid:
                    continue
                total += sum(int(t.read_text().split()[0]) for t in stat.parent.glob("task/*/schedstat"))
            except (OSError, ValueError, IndexError):  # a process or thread that ended meanwhile
                continue
        return total

    before, t0 = used(), time.perf_counter()
    time.sleep(seconds)
    return (used() - before) / 1e9 / (time.perf_counter() - t0)


def test_the_local_llm_server_leaves_the_cores_alone_after_an_answer(settings, running):
    """vLLM's separate CPU worker process busy-polled one core for a second after every request, and the desk's
    question embeddings ran 1.5x slower beside it; the worker now runs in the engine process (app/settings.py).
    """
    from app import services

    if not settings.local_vllm:
        pytest.skip("VLLM_BASE_URL points at a server elsewhere: its CPU is not this machine's")
    pgid = int(services._pidfile(settings, "vllm").read_text())
    body = {"model": settings.vllm_model, "max_tokens": 8, "temperature": 0,
            "messages": [{"role": "user", "content": "Say hello."}]}
    httpx.post(f"{settings.llm_url}/chat/completions", json=body, timeout=120).raise_for_status()
    assert _cores_busy(pgid, 0.5) < 0.3
