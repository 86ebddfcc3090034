"""The local cluster's PostgreSQL: Debian's server run as its `postgres` user, data under `.run/postgres`.

Conversations of every replica live here (LangGraph's `AsyncPostgresSaver`). Trust auth on loopback only;
a deployment sets DATABASE_URL to its managed Postgres instead.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from app.settings import Settings
from app.stack.services import ServiceError, Status


def pg_dir(settings: Settings) -> Path:
    """The local Postgres's folder: data, socket and log (owned by the postgres user)."""
    return settings.run_dir / "postgres"


def _as_postgres(cmd: list[str]) -> subprocess.CompletedProcess:
    """Postgres refuses to run as root: run its tools as the `postgres` user Debian's package made."""
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


def check_postgres(settings: Settings) -> Status:
    """Postgres accepts a connection to the help desk database."""
    st = Status("postgres", settings.postgres_url.replace("postgres@", "postgres:***@"), False)
    try:
        import psycopg

        with psycopg.connect(settings.postgres_url, connect_timeout=2) as conn:
            row = conn.execute("show server_version").fetchone()
            st.version = str(row[0]) if row else ""
        st.healthy, st.detail = True, f"data in {pg_dir(settings) / 'data'}"
    except Exception as exc:  # noqa: BLE001
        st.detail = f"not reachable: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}"
    return st


def start_postgres(settings: Settings) -> Status:
    """Initialise the data directory once, start the server on loopback and create the database."""
    if (st := check_postgres(settings)).healthy:
        return st
    pg_bin = settings.postgres_bin
    if not (pg_bin / "postgres").exists():
        raise ServiceError(f"PostgreSQL is not installed at {pg_bin}; run `make setup` (Debian's postgresql)")
    root, data = pg_dir(settings), pg_dir(settings) / "data"
    root.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "postgres:postgres", str(root)], check=True)
    if not (data / "PG_VERSION").exists():
        out = _as_postgres([str(pg_bin / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres", "-E", "UTF8",
                            "--no-instructions"])
        if out.returncode:
            raise ServiceError(f"postgres initdb failed: {out.stderr.strip()[-500:]}")
    opts = f"-p {settings.postgres_port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=200"
    out = _as_postgres([str(pg_bin / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(root / "postgres.log"),
                        "-w", "-t", "60", "start"])
    if out.returncode:
        raise ServiceError(f"postgres did not start: {out.stdout.strip()[-300:]} see {root / 'postgres.log'}")
    import psycopg

    admin = settings.postgres_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("select 1 from pg_database where datname = 'helpdesk'").fetchone():
            conn.execute("create database helpdesk")
    return check_postgres(settings)


def stop_postgres(settings: Settings, mode: str = "fast") -> bool:
    """Stop the local Postgres (fast: roll back open transactions); False when it was not running."""
    data = pg_dir(settings) / "data"
    if not (data / "postmaster.pid").exists():
        return False
    _as_postgres([str(settings.postgres_bin / "pg_ctl"), "-D", str(data), "-m", mode, "-w", "stop"])
    return True


def restart_postgres(settings: Settings) -> Status:
    """Stop Postgres (fast: open transactions roll back) and start it again on the same data."""
    stop_postgres(settings)
    return start_postgres(settings)
