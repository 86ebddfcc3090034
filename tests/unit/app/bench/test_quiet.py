import asyncio
import os
import time

from app.bench.quiet import LlmServer, cpu_ms, server_pids


def _process(proc, pid, cmdline, cpu_ns=0):
    task = proc / str(pid) / "task" / str(pid)
    task.mkdir(parents=True)
    (proc / str(pid) / "cmdline").write_bytes(cmdline)
    (task / "schedstat").write_text(f"{cpu_ns} 0 0\n")
    return task / "schedstat"


def test_the_servers_processes_are_found_only_for_a_server_on_this_machine(tmp_path):
    _process(tmp_path, 10, b"python\0-m\0vllm.entrypoints.openai.api_server\0")
    _process(tmp_path, 11, b"VLLM::EngineCore\0")
    _process(tmp_path, 12, b"redis-server\0")
    assert server_pids("http://127.0.0.1:18000/v1", proc=tmp_path) == [10, 11]
    assert server_pids("http://localhost:8000/v1", proc=tmp_path) == [10, 11]
    assert server_pids("http://gpu-box.internal:8000/v1", proc=tmp_path) == []


def test_cpu_time_adds_up_every_thread_and_skips_a_process_that_ended(tmp_path):
    _process(tmp_path, 10, b"vllm\0", cpu_ns=2_000_000)
    (tmp_path / "10" / "task" / "11").mkdir()
    (tmp_path / "10" / "task" / "11" / "schedstat").write_text("3000000 5 1\n")
    assert cpu_ms([10, 99], tmp_path) == 5.0


def test_this_processes_own_cpu_time_is_read_from_the_kernel():
    before = cpu_ms([os.getpid()])
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:
        pass
    assert cpu_ms([os.getpid()]) - before >= 40


def test_a_quiet_server_costs_one_window_and_a_busy_one_is_waited_out(tmp_path):
    stat = _process(tmp_path, 10, b"VLLM::EngineCore\0")
    server = LlmServer("http://127.0.0.1:18000/v1", proc=tmp_path)

    async def decode(for_s, ms_per_ms=2.0):  # both cores busy, as vLLM after a cut answer
        start = time.perf_counter()
        while (spent := time.perf_counter() - start) < for_s:
            stat.write_text(f"{int(spent * 1e6 * ms_per_ms * 1000)} 0 0\n")
            await asyncio.sleep(0.001)

    async def scenario():
        quiet_ms = await server.settle()
        busy = asyncio.create_task(decode(0.08))
        await asyncio.sleep(0)
        busy_ms = await server.settle()
        await busy
        return quiet_ms, busy_ms

    quiet_ms, busy_ms = asyncio.run(scenario())
    assert quiet_ms < 50
    assert busy_ms >= 80


def test_a_server_that_never_goes_quiet_is_waited_for_no_longer_than_the_limit(tmp_path):
    stat = _process(tmp_path, 10, b"vllm\0")
    server = LlmServer("http://127.0.0.1:18000/v1", proc=tmp_path)

    async def scenario():
        stop = False

        async def serve_someone_else():
            ns = 0
            while not stop:
                ns += 5_000_000
                stat.write_text(f"{ns} 0 0\n")
                await asyncio.sleep(0.001)

        other = asyncio.create_task(serve_someone_else())
        waited = await server.settle(limit_s=0.1)
        stop = True
        await other
        return waited

    waited = asyncio.run(scenario())
    assert 100 <= waited < 1000


def test_a_server_elsewhere_is_not_waited_for():
    assert asyncio.run(LlmServer("http://gpu-box.internal:8000/v1").settle()) == 0.0
