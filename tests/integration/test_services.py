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
    from app.stack import services

    again = services.up(settings)
    assert [s.healthy for s in again] == [True, True, True]


def _group_threads(pgid: int) -> list[Path]:
    """The scheduler statistics files of every thread in a process group, now."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[2]) == pgid:
                found += stat.parent.glob("task/*/schedstat")
        except (OSError, ValueError, IndexError):
            continue
    return found


def _cpu_ms(threads: list[Path]) -> float:
    total = 0
    for t in threads:
        try:
            total += int(t.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e6


def _cores_busy(pgid: int, seconds: float) -> float:
    """CPU used by a process group over `seconds`, in cores."""
    threads = _group_threads(pgid)
    before, t0 = _cpu_ms(threads), time.perf_counter()
    time.sleep(seconds)
    return (_cpu_ms(threads) - before) / 1000 / (time.perf_counter() - t0)


@pytest.fixture
def vllm_pgid(settings, running) -> int:
    """The local vLLM server's process group; its CPU is only this machine's when it runs here."""
    from app.stack import services

    if not settings.local_vllm:
        pytest.skip("VLLM_BASE_URL points at a server elsewhere: its CPU is not this machine's")
    return int(services._pidfile(settings, "vllm").read_text())


def test_the_local_llm_server_leaves_the_cores_alone_after_an_answer(settings, vllm_pgid):
    """vLLM's separate CPU worker process busy-polled one core for a second after every request, and the desk's
    question embeddings ran 1.5x slower beside it; the worker now runs in the engine process (app/settings.py).
    """
    body = {"model": settings.vllm_model, "max_tokens": 8, "temperature": 0,
            "messages": [{"role": "user", "content": "Say hello."}]}
    httpx.post(f"{settings.llm_url}/chat/completions", json=body, timeout=120).raise_for_status()
    assert _cores_busy(vllm_pgid, 0.5) < 0.3


def test_the_local_llm_server_stops_spinning_when_an_answer_is_out(settings, vllm_pgid):
    """With libgomp's default spin (300,000 rounds) vLLM's compute threads kept a core busy for about 5 ms after
    every engine step, and the desk's first embedding after an LLM answer ran 1.4x slower beside it; the local
    server now spins for a tenth of that (`VLLM_OMP_SPINCOUNT`). The CPU it uses in the 30 ms right after an
    answer, median of five answers: about 0.6 ms now, 4-5 ms with the default.
    """
    threads = _group_threads(vllm_pgid)
    used = []
    with httpx.Client(base_url=settings.llm_url, timeout=120) as client:
        for i in range(5):
            body = {"model": settings.vllm_model, "max_tokens": 24, "temperature": 0,
                    "messages": [{"role": "user", "content": f"Name {i + 2} colours."}]}
            client.post("/chat/completions", json=body).raise_for_status()
            before = _cpu_ms(threads)
            time.sleep(0.03)
            used.append(_cpu_ms(threads) - before)
            time.sleep(0.2)
    assert sorted(used)[2] < 2.0, f"vLLM used {sorted(used)} ms of CPU in the 30 ms after each answer"
