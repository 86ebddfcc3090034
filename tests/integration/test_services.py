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


@pytest.fixture(scope="module")
def embedder():
    """The desk's question encoder: its work, right after an answer, is what vLLM's busy cores slowed down."""
    from tools.embeddings import load_embedder

    encoder = load_embedder()
    encoder.embed(["warm up"])
    return encoder


def _used_during(threads: list, work) -> tuple[float, float]:  # noqa: ANN001
    """(CPU ms a process group's threads used, wall ms) while this process does `work`: no window of fixed length,
    the time the desk's own work takes.
    """
    before, t0 = _cpu_ms(threads), time.perf_counter()
    work()
    return _cpu_ms(threads) - before, (time.perf_counter() - t0) * 1000


@pytest.fixture
def vllm_pgid(settings, running) -> int:
    """The local vLLM server's process group; its CPU is only this machine's when it runs here."""
    from app.stack import services

    if not settings.local_vllm:
        pytest.skip("VLLM_BASE_URL points at a server elsewhere: its CPU is not this machine's")
    return int(services._pidfile(settings, "vllm").read_text())


def test_the_local_llm_server_leaves_the_cores_alone_after_an_answer(settings, vllm_pgid, embedder):
    """vLLM's separate CPU worker process busy-polled one core for a second after every request, and the desk's
    question embeddings ran 1.5x slower beside it; the worker now runs in the engine process (app/settings.py).
    Measured over the desk's own work right after an answer: embedding 40 questions (about 120 ms here).
    """
    body = {"model": settings.vllm_model, "max_tokens": 8, "temperature": 0,
            "messages": [{"role": "user", "content": "Say hello."}]}
    httpx.post(f"{settings.llm_url}/chat/completions", json=body, timeout=120).raise_for_status()
    used, took = _used_during(_group_threads(vllm_pgid),
                              lambda: [embedder.embed([f"When is payday in month {i}?"]) for i in range(40)])
    assert used / took < 0.3, f"vLLM used {used:.0f} ms of CPU in the {took:.0f} ms after an answer"


def test_the_local_llm_server_stops_spinning_when_an_answer_is_out(settings, vllm_pgid, embedder):
    """With libgomp's default spin (300,000 rounds) vLLM's compute threads kept a core busy for about 5 ms after
    every engine step, and the desk's first embedding after an LLM answer ran 1.4x slower beside it; the local
    server now spins for a tenth of that (`VLLM_OMP_SPINCOUNT`). The CPU it uses while the desk embeds a question
    right after an answer (about 10 ms of work), median of five answers: under 1 ms now, 4-5 ms with the default.
    """
    threads = _group_threads(vllm_pgid)
    used = []
    with httpx.Client(base_url=settings.llm_url, timeout=120) as client:
        for i in range(5):
            body = {"model": settings.vllm_model, "max_tokens": 24, "temperature": 0,
                    "messages": [{"role": "user", "content": f"Name {i + 2} colours."}]}
            client.post("/chat/completions", json=body).raise_for_status()
            used.append(_used_during(threads, lambda: embedder.embed(["What should I wear in Rome tomorrow?"]))[0])
    assert sorted(used)[2] < 2.0, f"vLLM used {sorted(used)} ms of CPU while the desk embedded after each answer"
