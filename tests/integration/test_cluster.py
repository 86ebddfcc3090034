"""Past one machine, on one machine: the help desk on Ray Serve (2 replicas) with conversations in Postgres and
two vLLM servers behind vLLM's router, all real processes started by `app.stack.cluster.up` (as `make cluster` does).

Faults are real too: a replica is killed through Ray's API, a vLLM server with SIGKILL, Postgres restarted.
"""

from __future__ import annotations

import os
import re
import signal
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from app.bench import cluster_load
from app.remote import RemoteAsker
from app.stack import cluster, postgres, redis_cluster, services
from tests.integration.servers import bring_up

NOT_REACHABLE = "The language model is not reachable right now"
FOUND_RUNNING: dict[str, bool] = {}  # whether the cluster ran before this module: then it is left as it was found
WRITING = "Write a short, friendly note to my team about the stock count on {day}."


@pytest.fixture(scope="module")
def stack(settings, running):
    """The whole stack up; afterwards what this fixture started beyond the single-process services is stopped
    (a cluster that was already running is reused and left running, like the services)."""
    was_running = FOUND_RUNNING["cluster"] = cluster.check_serve(settings).healthy
    before = os.environ.get("LLM_DRAFTS")
    os.environ["LLM_DRAFTS"] = "1"  # the replicas let the LLM draft: the writing requests below are vLLM's load
    try:
        bring_up("the cluster", cluster.up, settings)
    finally:
        os.environ.pop("LLM_DRAFTS") if before is None else os.environ.update(LLM_DRAFTS=before)
    yield settings
    if not was_running:
        cluster.down(settings, keep_services=True)


def asker(settings) -> RemoteAsker:
    return RemoteAsker(cluster.serve_url(settings), settings)


def test_status_lists_every_tier_with_replicas(stack):
    by_name = {s.name: s for s in cluster.status(stack)}
    assert {"redis", "backend", "vllm", "vllm-2", "vllm-router", "postgres", "ray", "serve"} <= set(by_name)
    assert all(s.healthy for s in by_name.values()), [s for s in by_name.values() if not s.healthy]
    assert by_name["serve"].replicas == 2 and by_name["vllm-router"].replicas == 2


def test_load_through_the_http_api_has_no_errors_and_uses_both_replicas(stack):
    """32 concurrent signed-in sessions through Serve's proxy (x3 requests by default; the issue's full 32 x 10
    with HELPDESK_LOAD_REQUESTS=10): every request answered, none an error, both replicas serving."""
    per_session = int(os.environ.get("HELPDESK_LOAD_REQUESTS", "3"))
    result = cluster_load.run(cluster.serve_url(stack), stack, sessions=32, per_session=per_session, alone_sessions=0)
    print(f"\ncluster load: {result['requests']} requests, {result['throughput_rps']:.2f} req/s, "
          f"p95 {result['p95_ms']:,.0f} ms, routes {result['routes']}, served by {result['served_by']}")
    assert result["requests"] == 32 * per_session and result["errors"] == 0, [
        r for r in result["rows"] if r["error"]][:3]
    assert all(r["answer"] for r in result["rows"]) and "error" not in result["routes"]
    assert len(result["served_by"]) == 2, result["served_by"]


def test_conversation_continues_after_its_replica_is_killed(stack):
    client, thread = asker(stack), f"cluster-{uuid.uuid4().hex[:10]}"
    first = client.ask({"q": "What was my salary in March 2026?", "user": "E1012", "thread": thread})
    assert first.get("error") is None and first["route"] == "template", first
    assert "March 2026" in first["answer"] and first.get("served_by", "").startswith("SERVE_REPLICA::helpdesk")
    cluster.kill_replica(stack, first["served_by"])
    second = client.ask({"q": "and last month?", "user": "E1012", "thread": thread})
    assert second.get("error") is None, second
    assert second["served_by"] != first["served_by"]  # the other replica, reading turn 1 from Postgres
    assert second["route"] == "template" and second["intent"] == "salary"
    assert "EUR" in second["answer"] and second["answer"] != first["answer"]
    client.close()


def test_conversations_survive_a_postgres_restart(stack):
    client, thread = asker(stack), f"cluster-{uuid.uuid4().hex[:10]}"
    first = client.ask({"q": "What was my attendance in May 2026?", "user": "E1013", "thread": thread})
    assert first.get("error") is None and first["intent"] == "attendance", first
    assert postgres.restart_postgres(stack).healthy
    second = client.ask({"q": "and in June?", "user": "E1013", "thread": thread})
    assert second.get("error") is None, second  # the replicas' pools replaced their dead connections
    assert second["intent"] == "attendance" and "June" in second["answer"], second
    client.close()


def _vllm_load(settings, i: int) -> float:
    """Requests running or waiting in the i-th vLLM server (its own /metrics)."""
    base = cluster.vllm_settings(settings, i).llm_url.removesuffix("/v1")
    try:
        text = httpx.get(base + "/metrics", timeout=2).text
    except httpx.HTTPError:
        return 0.0
    found = re.findall(r"^vllm:num_requests_(?:running|waiting)\{[^}]*\} ([0-9.e+]+)$", text, re.M)
    return sum(float(v) for v in found)


def test_a_killed_vllm_server_fails_only_its_own_requests(stack):
    n = 8
    users = [f"E10{i:02d}" for i in range(1, n + 1)]
    clients = {u: asker(stack) for u in users}
    for u in users:  # sign in first: the load is the questions, not the logins
        clients[u].token(u)
    with ThreadPoolExecutor(n) as pool:
        futures = [pool.submit(clients[u].ask, {"q": WRITING.format(day=f"day {k}"), "user": u})
                   for k, u in enumerate(users)]
        # Kill the busier server once vLLM is generating. Its gauges lag its engine steps, so they cannot say
        # exactly which requests it held: the test asserts what a user sees instead (below).
        deadline, loads = time.monotonic() + 120, [0.0, 0.0]
        while max(loads) < 1:
            assert time.monotonic() < deadline, "no LLM request reached the vLLM servers"
            time.sleep(0.1)
            loads = [_vllm_load(stack, i) for i in range(2)]
        victim = loads.index(max(loads))
        os.killpg(int(services._pidfile(stack, cluster.vllm_name(victim)).read_text()), signal.SIGKILL)
        rows = [f.result(timeout=300) for f in futures]
    try:
        failed = [r for r in rows if NOT_REACHABLE in (r.get("answer") or "")]
        assert all(r.get("answer") for r in rows), rows  # no error page, no empty reply
        assert all(r.get("error") is None for r in rows if r not in failed), rows
        assert len(failed) < n, "every request failed: the surviving server's requests were lost too"
        # After the kill the router sends everything to the surviving server.
        after = [clients[u].ask({"q": WRITING.format(day="Friday"), "user": u}) for u in users[:3]]
        assert all(r.get("answer") and NOT_REACHABLE not in r["answer"] for r in after), after
        assert all(r["route"] == "llm" for r in after), after
    finally:
        for c in clients.values():
            c.close()
        services.stop(stack, cluster.vllm_name(victim))  # its pid file; then the same server again where it is
        # the single-process one (the other modules' vLLM) or the cluster outlives the module (a start: ~30 s)
        if victim == 0 or FOUND_RUNNING["cluster"]:
            services.start_vllm(cluster.vllm_settings(stack, victim), cluster.vllm_name(victim))


def _shard_port(settings, key: str) -> int:
    """The local cluster master that owns a key's slot."""
    import redis

    node = redis.Redis(port=redis_cluster.cluster_ports(settings)[0])
    slot = int(node.execute_command("CLUSTER", "KEYSLOT", key))
    for start, end, master, *_ in node.execute_command("CLUSTER", "SLOTS"):
        if start <= slot <= end:
            return int(master[1])
    raise AssertionError(f"no master owns slot {slot}")


def test_a_stopped_redis_master_only_bypasses_its_own_keys(stack):
    from tools.cache import cache_key
    from tools.registry import TOOLS

    client = asker(stack)
    questions = {u: f"What was my salary in {m} 2026?" for u, m in
                 [("E1014", "January"), ("E1015", "February"), ("E1016", "March"), ("E1017", "April")]}
    first = {u: client.ask({"q": q, "user": u}) for u, q in questions.items()}
    assert all(r.get("error") is None and r["intent"] == "salary" for r in first.values()), first
    again = {u: client.ask({"q": q, "user": u}) for u, q in questions.items()}
    assert all(r["tools"][0]["cache"] == "hit" for r in again.values()), again  # served from the cluster
    shard = {u: _shard_port(stack, cache_key(TOOLS["salary"], r["tools"][0]["args"], u)) for u, r in first.items()}
    down = shard["E1014"]  # the others may share it or not: both outcomes are checked below
    services.stop(stack, redis_cluster.redis_node_name(down))
    try:
        during = {u: client.ask({"q": q, "user": u}) for u, q in questions.items()}
        for u, r in during.items():
            assert r.get("error") is None and r["answer"] == first[u]["answer"], r  # still right: the backend
            assert r["tools"][0]["cache"] == ("bypass" if shard[u] == down else "hit"), (u, shard[u], down, r)
    finally:
        redis_cluster.start_redis_cluster(stack)  # the same master again, with its slots (nodes.conf), empty
    after = {u: client.ask({"q": q, "user": u}) for u, q in questions.items() if shard[u] == down}
    assert all(r["tools"][0]["cache"] == "miss" for r in after.values()), after  # reachable again, refilled
    again = {u: client.ask({"q": q, "user": u}) for u, q in questions.items() if shard[u] == down}
    assert all(r["tools"][0]["cache"] == "hit" for r in again.values()), again
    client.close()
