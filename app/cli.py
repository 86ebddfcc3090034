"""Command line: `python -m app services|cluster up|down|status`, `company check`, `ask`, `ui`, `bench`, `calibrate`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from app.settings import get_settings
from app.stack import services


def _services(ns: argparse.Namespace) -> int:
    settings = get_settings()
    if ns.action == "up":
        try:
            for st in services.up(settings, ns.only):
                print(f"{st.name:10s} {'ok' if st.healthy else 'FAIL':4s} {st.url} {st.version} {st.detail}")
        except services.ServiceError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        return 0
    if ns.action == "down":
        print("stopped: " + (", ".join(services.down(settings)) or "nothing was running"))
        return 0
    statuses = services.status(settings)
    if ns.json:
        print(services.as_json(statuses))
    else:
        for st in statuses:
            print(f"{st.name:10s} {'ok' if st.healthy else 'DOWN':4s} {st.url} {st.version} {st.detail}")
    return 0 if all(s.healthy for s in statuses) else 1


def _cluster(ns: argparse.Namespace) -> int:
    from app.stack import cluster

    settings = get_settings()
    try:
        if ns.action == "up":
            statuses = cluster.up(settings, ns.replicas, ns.redeploy)
        elif ns.action == "down":
            print("stopped: " + (", ".join(cluster.down(settings)) or "nothing was running"))
            return 0
        else:
            statuses = cluster.status(settings)
    except services.ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if ns.json:
        print(cluster.as_json(statuses))
    else:
        for st in statuses:
            reps = f" x{st.replicas}" if st.replicas else ""
            print(f"{st.name:12s} {'ok' if st.healthy else 'DOWN':4s} {st.url}{reps} {st.version} {st.detail}")
    return 0 if all(s.healthy for s in statuses) else 1


def _ask(ns: argparse.Namespace) -> int:
    from langchain_core.tracers.langchain import wait_for_all_tracers

    from app.ask import ask_file, ask_one

    if not ns.file and not ns.question:
        print("error: give a QUESTION or --file FILE.jsonl", file=sys.stderr)
        return 2
    if ns.url:
        if ns.option:
            print("error: --option sets in-process knobs; a served help desk uses its own settings", file=sys.stderr)
            return 2
        from app.ask import ask_over_http

        return ask_over_http(ns.url, ns.question, ns.file, ns.user, ns.thread, ns.json)
    try:
        if ns.file:
            return asyncio.run(ask_file(ns.file, default_user=ns.user, options=ns.option))
        return asyncio.run(ask_one(ns.question, user=ns.user, thread=ns.thread, as_json=ns.json, options=ns.option))
    finally:
        wait_for_all_tracers()  # a short-lived process must not drop its traces


def _ui(ns: argparse.Namespace) -> int:
    from app.settings import get_settings
    from app.web import serve
    from tools.demo_backend.db import EMPLOYEES
    from tools.demo_backend.identity import credentials_file

    settings = get_settings()
    where = f"http://{ns.host or settings.ui_host}:{ns.port or settings.ui_port}/"
    print(f"Chat: {where} (sign in first; API: POST {where}v1/chat with a bearer token)")
    if not settings.backend_url:  # the demo identity provider
        print(f"Demo sign-in: employee ids E1001..E{1000 + EMPLOYEES}; their passwords are in "
              f"{credentials_file(settings.demo_db)} (readable by you only)", flush=True)
    serve(host=ns.host, port=ns.port)
    return 0


def _calibrate(ns: argparse.Namespace) -> int:
    if ns.quotes:
        from app.training.quote_calibration import main as quotes_main

        return quotes_main(as_json=ns.json)
    if ns.leave_types:
        from app.training.leave_calibration import main as leave_main

        return leave_main(as_json=ns.json)
    if ns.languages:
        from app.training.calibrate_languages import main as languages_main

        return asyncio.run(languages_main(as_json=ns.json, write=ns.write))
    if ns.public:
        from app.training.calibrate_public import main as public_main

        return asyncio.run(public_main(as_json=ns.json, write=ns.write, per_intent=ns.sample))
    from app.training.calibrate import main as calibrate_main

    return asyncio.run(calibrate_main(as_json=ns.json, write=ns.write))


def _bench(ns: argparse.Namespace) -> int:
    from app.bench.focused import accuracy_only, contention
    from app.bench.run import main as bench_main

    if ns.contention:
        return asyncio.run(contention(ns.threads))
    if ns.accuracy_only:
        return asyncio.run(accuracy_only(out=ns.out))
    if ns.http:
        import json
        from pathlib import Path

        from app.bench.cluster_load import run
        from app.remote import RemoteError

        try:
            result = run(ns.http, get_settings(), ns.sessions, ns.per_session)
        except RemoteError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        Path(ns.out).mkdir(parents=True, exist_ok=True)
        (Path(ns.out) / "http-load.json").write_text(json.dumps(result, indent=2))  # with every row
        print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=2))
        return 0 if result["errors"] == 0 else 1

    return asyncio.run(bench_main(quick=ns.quick, out=ns.out, load_sessions=ns.sessions, repeats=ns.repeats))


def _company(ns: argparse.Namespace) -> int:
    from pathlib import Path

    from app.company import describe, reload_served

    if ns.action == "reload":
        text, ok = reload_served(ns.url, ns.user, get_settings())
    else:
        text, ok = describe(Path(ns.dir) if ns.dir else get_settings().company_dir)
    print(text, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1


def build_parser() -> argparse.ArgumentParser:
    """All subcommands."""
    p = argparse.ArgumentParser(prog="python -m app", description="the company help desk")
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("services", help="start, stop or check the embedded services")
    s.add_argument("action", choices=["up", "down", "status"])
    s.add_argument("--json", action="store_true")
    s.add_argument("--only", nargs="*", choices=list(services.STARTERS))
    s.set_defaults(fn=_services)

    k = sub.add_parser("cluster", help="the scaled-out stack: Ray Serve replicas, Postgres, vLLM servers + router")
    k.add_argument("action", choices=["up", "down", "status"])
    k.add_argument("--json", action="store_true")
    k.add_argument("--replicas", type=int, help="app replicas for this deployment (default: SERVE_REPLICAS)")
    k.add_argument("--redeploy", action="store_true", help="roll the replicas even when they are ready (new code)")
    k.set_defaults(fn=_cluster)

    co = sub.add_parser("company", help="check a company's folder (what it holds, every problem in it), or make a "
                        "served desk read its folder again")
    co.add_argument("action", choices=["check", "reload"])
    co.add_argument("dir", nargs="?", help="check: the folder (default: COMPANY_DIR)")
    co.add_argument("--url", default="http://127.0.0.1:7860", help="reload: the served desk")
    co.add_argument("--user", default="E1001", help="reload: an employee ADMIN_EMPLOYEES names (signs in with the "
                    "demo credentials)")
    co.set_defaults(fn=_company)

    a = sub.add_parser("ask", help="ask one question, or a JSONL file of them")
    a.add_argument("question", nargs="?")
    a.add_argument("--user", default="E1001",
                   help="employee id of the caller. An operator tool on the server: it trusts this value, so it "
                        "is not an entry for employees (they sign in to the chat or send a bearer token to the API)")
    a.add_argument("--thread", default=None, help="conversation id (history is kept per thread)")
    a.add_argument("--file", help="JSONL with {q, user, thread} per line")
    a.add_argument("--json", action="store_true", help="one JSON object per answer")
    a.add_argument("--url", default=None, help="ask a served help desk (e.g. http://127.0.0.1:7860) over its HTTP "
                   "API instead of in process; each row's user signs in with the demo credentials")
    a.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="per-run knob of graph.context.Context, e.g. faq_enabled=false")
    a.set_defaults(fn=_ask)

    u = sub.add_parser("ui", help="serve the Gradio chat")
    u.add_argument("--host", default=None)
    u.add_argument("--port", type=int, default=None)
    u.set_defaults(fn=_ui)

    c = sub.add_parser("calibrate", help="router accuracy, wrong shortcuts and coverage on the test split")
    c.add_argument("--json", action="store_true", help="print the full report as JSON")
    c.add_argument("--write", action="store_true", help="keep the summary in data/calibration.json")
    c.add_argument("--quotes", action="store_true", help="the handbook quote's threshold instead of the router's")
    c.add_argument("--leave-types", action="store_true",
                   help="the leave-type classifiers (which leave a question is about) instead of the router")
    c.add_argument("--public", action="store_true",
                   help="the shipped router on the public data sets' test splits (CLINC150, BANKING77), beside "
                        "the project's own splits")
    c.add_argument("--languages", action="store_true",
                   help="the router of the other languages (zh, de, fr, es, it, nl, pt), per language, on each "
                        "language's own test split")
    c.add_argument("--sample", type=int, default=None, metavar="N",
                   help="with --public: only the first N test queries of every intent")
    c.set_defaults(fn=_calibrate)

    b = sub.add_parser("bench", help="benchmark against the plain agent")
    b.add_argument("--quick", action="store_true")
    b.add_argument("--out", default="bench-results")
    b.add_argument("--repeats", type=int, default=1, help="ablation rounds (each with cold caches); more rounds "
                   "narrow the slowdown's 95%% interval")
    b.add_argument("--contention", action="store_true",
                   help="router decision time idle vs while vLLM decodes (the 2-core fight)")
    b.add_argument("--threads", type=int, default=None, help="with --contention: encoder threads to try")
    b.add_argument("--accuracy-only", action="store_true",
                   help="the optimized graph alone on the workload: main mix vs held-out slice accuracy (minutes)")
    b.add_argument("--sessions", type=int, default=8)
    b.add_argument("--http", metavar="URL", help="only a load test through a served help desk's HTTP API "
                   "(e.g. `make cluster`'s http://127.0.0.1:8000): --sessions x --per-session requests")
    b.add_argument("--per-session", type=int, default=10)
    b.set_defaults(fn=_bench)
    return p


# Commands that serve or ask the desk, or start what serves it: they read the company's folder first.
_SERVES = ("ask", "ui", "bench", "calibrate", "services up", "cluster up")


def main(argv: list[str] | None = None) -> None:
    """Parse and dispatch; exit code says whether it worked. A company folder that cannot be served is one clear
    message naming every problem (file and line), not a stack trace, before anything starts.
    """
    ns = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if ns.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    command = f"{ns.cmd} {getattr(ns, 'action', '')}".strip()
    if command in _SERVES and not getattr(ns, "url", None) and not getattr(ns, "http", None):
        from tools.company import CompanyError, open_company
        from tools.i18n import LANGUAGES

        try:
            open_company(get_settings().company_dir, LANGUAGES)
        except CompanyError as exc:
            print(f"error: {exc}\n(`python -m app company check DIR` lists the same)", file=sys.stderr)
            sys.exit(2)
    from app.observability import setup_otel

    setup_otel()
    sys.exit(ns.fn(ns))


if __name__ == "__main__":
    main()
