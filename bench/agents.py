"""Sub-agent benchmark: one parent fans out to 1,000 children with the offline model, and every
completion is delivered back to it through the durable announce inbox.

Run from the repository root::

    .venv/bin/python bench/agents.py [--children 1000] [--max-children 20] [--concurrent 20]
                                     [--echo-delay-ms 5] [--profile] [--store-url URL]

The parent gets one message, ``spawn <n> x: <task>``: the offline model spawns one child per
tool round until the requester's active-children limit refuses, and every completion turn
resumes the wave (docs/agents.md, "Waves"). Each child answers ``echo: <task>``. Measured: the
time from sending that message until every child's task is terminal, every inbox row is
delivered and the parent is idle; the number of tasks that are not ``succeeded`` (lost, failed)
and of completions not delivered exactly once. Targets (issue 17): <= 3 s for 1,000 children,
at most 5 store transactions and 30 SQL statements per child; each printed with PASS or MISS.

Runs in-process on a temporary SQLite state directory (a started runtime: run manager, store
thread, announce dispatcher, its periodic passes). Also printed: the store transactions and the
SQL statements the store's connection ran, per child (counted with sqlite3's trace callback,
from the parent's message until everything has settled). ``--profile`` adds a cProfile summary
of the event loop thread and of the store thread. ``--store-url postgresql://…`` runs on a
fresh PostgreSQL schema ``bench_agents_<random>`` (dropped afterwards); statements are counted
on SQLite only.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from clawline.agents.messages import text_of
from clawline.config import Settings
from clawline.runtime import Runtime
from clawline.store import Store
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing.statements import StatementCount

PARENT = "agent:main:main"
TARGET_S = 3.0
MAX_TRANSACTIONS = 5.0
MAX_STATEMENTS = 30.0


def _config(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "agents": {
            "echo_delay_ms": args.echo_delay_ms,
            "defaults": {
                "subagents": {
                    "maxChildrenPerAgent": args.max_children,
                    "maxConcurrent": args.concurrent,
                }
            },
        }
    }


async def _settled(runtime: Runtime, total: int) -> bool:
    """Every child ended, every completion delivered, the parent idle (cheap checks first; the
    run state is read on the event loop, the store on its worker)."""
    if runtime.busy or runtime.runs.has_active_run(PARENT):
        return False
    return await runtime.workers.run(_store_settled, runtime.store, total)


def _store_settled(store: Store, total: int) -> bool:
    if store.runs.count_active(PARENT) or store.inbox.requesters_with_pending():
        return False
    return len(store.runs.for_requester(PARENT)) >= total


async def _run(args: argparse.Namespace, state: Path) -> dict[str, Any]:
    runtime = Runtime.open(Settings(state_dir=state, raw=_config(args), store_url=args.store_url))
    store = runtime.store
    traced = store if isinstance(store, SQLiteStore) else None
    counted = StatementCount()
    profilers: list[cProfile.Profile] = []
    async with runtime:
        if args.profile:
            loop_profiler, store_profiler = cProfile.Profile(), cProfile.Profile()
            await runtime.workers.run(store_profiler.enable)  # every store call runs there
            loop_profiler.enable()
            profilers = [loop_profiler, store_profiler]
        if traced is not None:
            await runtime.workers.run(traced.trace, counted)
        calls_before = (runtime.workers.calls, runtime.workers.inline_calls)
        started = time.perf_counter()
        message = f"spawn {args.children} x: check item"
        await runtime.runs.send(session_key=PARENT, message=message, idempotency_key="bench")
        deadline = started + args.timeout
        while time.perf_counter() < deadline:
            await asyncio.sleep(0.05)
            if await _settled(runtime, args.children):
                break
        elapsed = time.perf_counter() - started
        calls = runtime.workers.calls - calls_before[0]
        inline_calls = runtime.workers.inline_calls - calls_before[1]
        if traced is not None:
            await runtime.workers.run(traced.trace, None)
        for profiler in profilers[:1]:
            profiler.disable()
        if profilers:
            await runtime.workers.run(profilers[1].disable)
        figures = await runtime.workers.run(_figures, store)
    runtime.close()
    figures["elapsed_s"] = elapsed
    figures["store_calls"], figures["inline_calls"] = calls, inline_calls
    figures["transactions"] = counted.transactions if traced is not None else None
    figures["statements"] = counted.statements if traced is not None else None
    for name, profiler in zip(("event loop", "store thread"), profilers, strict=False):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(args.sort).print_stats(args.top)
        print(f"--- profile: {name} ---\n{out.getvalue()}")
    return figures


def _figures(store: Store) -> dict[str, Any]:
    runs = store.runs.for_requester(PARENT)
    statuses: Counter[str] = Counter()
    for run in runs:
        task = store.tasks.get(run.task_id) if run.task_id else None
        statuses[task.status if task else "missing"] += 1
    delivered: Counter[str] = Counter()
    for run in runs:
        item = store.inbox.by_run(run.run_id)
        if item is not None and item.delivered_at is not None:
            delivered[run.run_id] += 1
    entry = store.get(PARENT)
    assert entry is not None
    events = store.events(entry.session_id, limit=1_000_000)
    in_transcript: Counter[str] = Counter()
    turns = 0
    for event in events:
        announce = event.data.get("announce")
        if isinstance(announce, dict):
            turns += 1
            for run_id in announce.get("runIds", []):
                in_transcript[str(run_id)] += 1
    text = "".join(text_of(event.data) for event in events[-1:])
    return {
        "spawned": len(runs),
        "task_statuses": dict(statuses),
        "lost_or_failed": sum(n for status, n in statuses.items() if status != "succeeded"),
        "delivered_once": sum(1 for run in runs if delivered[run.run_id] == 1),
        "in_transcript_once": sum(1 for run in runs if in_transcript[run.run_id] == 1),
        "completion_turns": turns,
        "transcript_messages": len(events),
        "last_reply": text[:80],
    }


def _verdict(value: float, bound: float) -> str:
    return "PASS" if value <= bound else "MISS"


def _drop_schema(url: str, schema: str) -> None:
    with psycopg.connect(url.split("?")[0], autocommit=True) as admin:
        admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--children", type=int, default=1000)
    parser.add_argument("--max-children", type=int, default=20)
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--echo-delay-ms", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--sort", default="cumulative", help="pstats order (e.g. tottime)")
    parser.add_argument("--store-url", help="postgresql://… (a fresh schema); default SQLite")
    args = parser.parse_args()
    state = Path(tempfile.mkdtemp(prefix="clawline-bench-agents-"))
    schema = None
    if args.store_url:
        schema = f"bench_agents_{uuid.uuid4().hex[:8]}"
        base_url = args.store_url
        args.store_url = f"{base_url}{'&' if '?' in base_url else '?'}schema={schema}"
    try:
        figures = asyncio.run(_run(args, state))
    finally:
        shutil.rmtree(state, ignore_errors=True)
        if schema is not None:
            _drop_schema(base_url, schema)
    elapsed = figures["elapsed_s"]
    print(f"children               {figures['spawned']} (asked {args.children})")
    verdict = _verdict(elapsed, TARGET_S)
    print(f"time to all delivered  {elapsed:.2f} s  target <= {TARGET_S:.0f} s {verdict}")
    per_child = max(1, figures["spawned"])
    print(f"per child              {1000 * elapsed / max(1, args.children):.2f} ms")
    for name, key, bound in (
        ("store transactions", "transactions", MAX_TRANSACTIONS),
        ("SQL statements", "statements", MAX_STATEMENTS),
    ):
        if figures[key] is None:
            print(f"{name:<22} not counted (SQLite only)")
        else:
            value = figures[key] / per_child
            print(
                f"{name:<22} {value:.1f} per child  target <= {bound:.0f} {_verdict(value, bound)}"
            )
    print(
        f"store calls            {figures['store_calls'] / per_child:.1f} per child,"
        f" {figures['inline_calls'] / max(1, figures['store_calls']):.0%} of them at once"
        " on the event loop (short calls, SQLite)"
    )
    print(f"task statuses          {figures['task_statuses']}")
    print(f"lost or failed         {figures['lost_or_failed']} (must be 0)")
    print(f"delivered exactly once {figures['delivered_once']} / {figures['spawned']}")
    print(f"in transcript once     {figures['in_transcript_once']} / {figures['spawned']}")
    print(f"completion turns       {figures['completion_turns']}")
    print(f"parent transcript      {figures['transcript_messages']} messages")
    print(f"parent's last reply    {figures['last_reply']!r}")
    ok = (
        figures["spawned"] == args.children
        and figures["lost_or_failed"] == 0
        and figures["delivered_once"] == args.children
        and figures["in_transcript_once"] == args.children
    )
    print("result                 " + ("ok" if ok else "FAILED"))
    return 0 if ok and figures["elapsed_s"] <= TARGET_S else 1


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    sys.exit(main())
