"""Helpers for tests that start what they need: server processes (the chat UI, LangGraph's dev server), services."""

from __future__ import annotations

import contextlib
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from app.settings import ROOT
from app.stack import services


@contextlib.contextmanager
def serving(cmd: list[str], health_url: str, log_name: str, timeout: float = 180, env: dict | None = None,
            cwd: Path = ROOT):
    """Run a server process (in `cwd`) for the duration of the block, once its health URL answers 200."""
    log_path = ROOT / ".run" / "logs" / log_name
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    if httpx.get(health_url, timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert proc.poll() is None, f"{cmd[0]} exited; see {log_path}"
                assert time.monotonic() < deadline, f"{cmd[0]} did not answer in {timeout:.0f} s; see {log_path}"
                time.sleep(0.5)
            yield
        finally:
            proc.terminate()
            proc.wait(15)


def bring_up(what: str, start, *args):
    """Start something with `start(*args)`; the test fails with its reason unless every component is healthy."""
    try:
        statuses = start(*args)
    except services.ServiceError as exc:
        pytest.fail(f"{what} could not start: {exc}")
    assert all(s.healthy for s in statuses), statuses
    return statuses
