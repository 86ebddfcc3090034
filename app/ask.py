"""`python -m app ask`: questions through the graph, printed as text or one JSON object per line.

The command line only: reading questions (an argument or a JSONL file), printing answers and rows. The turn
itself is app/turn.py's, in process, or a served desk's over HTTP (`--url`, app/remote.py).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from app.failures import failure_of
from app.remote import RemoteAsker
from app.settings import get_settings
from app.turn import error_row, open_graph, run_turn
from graph.context import Context


async def ask_one(question: str, user: str, thread: str | None, as_json: bool, options: list[str]) -> int:
    """Ask one question; stream the answer to the terminal, or print the JSON row."""
    try:
        ctx = Context.from_options(options)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    async with open_graph() as desk:
        printer = None if as_json else (lambda t: print(t, end="", flush=True))
        row = await run_turn(desk, question, user, thread, ctx, printer)
    if as_json:
        print(json.dumps(row, ensure_ascii=False))
    else:
        _said_why(row)
        print(f"\n[{row['route']} · {row['total_ms']:.0f} ms · llm calls {row['llm_calls']}]")
    return 0 if not row["error"] else 1


def _said_why(row: dict[str, Any]) -> None:
    """A turn that could not run: its sentence after what streamed, as the chat shows it (app/failures.py)."""
    if why := failure_of(row):
        print(("\n\n" if row["answer"] else "") + why.message, end="")


def _parse_line(line: bytes, default_user: str) -> tuple[dict[str, Any] | None, str | None]:
    try:
        item = json.loads(line.decode("utf-8", errors="replace"))
    except ValueError:
        return None, "this line is not valid JSON; expected {\"q\": ..., \"user\": ..., \"thread\": ...}"
    if isinstance(item, dict) and "q" not in item and isinstance(item.get("question"), str):
        item = {**item, "q": item["question"]}  # the field's long name is accepted too
    if not isinstance(item, dict) or not isinstance(item.get("q"), str):
        return None, "each line needs a string field \"q\" with the question"
    return {"q": item["q"], "user": str(item.get("user") or default_user),
            "thread": str(item["thread"]) if item.get("thread") else None}, None


def _read_lines(path: str) -> list[bytes]:
    """The non-empty lines of a questions file (OSError when it cannot be read)."""
    return [ln for ln in open(path, "rb").read().splitlines() if ln.strip()]


async def ask_file(path: str, default_user: str, options: list[str]) -> int:
    """Each JSONL line through the graph in order; a bad line yields an error row, not a crash."""
    try:
        ctx = Context.from_options(options)
        lines = _read_lines(path)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    async with open_graph() as desk:
        for line in lines:
            item, err = _parse_line(line, default_user)
            if item is None:
                row = error_row({}, err or "")
            else:
                row = await run_turn(desk, item["q"], item["user"], item["thread"], ctx)
            print(json.dumps(row, ensure_ascii=False), flush=True)
    return 0


def ask_over_http(url: str, question: str | None, path: str | None, user: str, thread: str | None,
                  as_json: bool) -> int:
    """`ask --url`: the same rows, through a served help desk's `POST /v1/chat` (app/remote.py)."""
    if path:
        try:
            lines = _read_lines(path)
        except OSError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    asker = RemoteAsker(url, get_settings())
    try:
        if not path:
            printer = None if as_json else (lambda t: print(t, end="", flush=True))
            row = asker.ask({"q": question, "user": user, "thread": thread}, printer)
            if as_json:
                print(json.dumps(row, ensure_ascii=False))
            elif failure_of(row):
                _said_why(row)
                print(f"\n[{row['route']} · {row['total_ms']:.0f} ms]")
            else:
                print(f"\n[{row['route']} · {row['total_ms']:.0f} ms]" + (f" {row['error']}" if row["error"] else ""))
            return 0 if not row["error"] else 1
        for line in lines:
            item, err = _parse_line(line, user)
            row = asker.ask(item) if item else error_row({}, err or "")
            print(json.dumps(row, ensure_ascii=False), flush=True)
        return 0
    finally:
        asker.close()
