"""Several gateways on one PostgreSQL schema: spawn throughput and ``sessions.changed`` fan-out.

Run from the repository root (PostgreSQL at ``CLAWLINE_BENCH_PG_URL``, default
``postgresql://postgres@127.0.0.1:5432/test``)::

    .venv/bin/python bench/instances.py [--instances 1 2 3] [--parents 10] [--per-parent 20]

For each count of instances, a fresh schema and that many real gateway processes (``python -m
clawline gateway run``, the offline model, ``echoDelayMs = 0``). One client per instance
subscribes to ``sessions.changed``; a client on the first instance sends ``spawn <n> x: …`` to
every parent at once, and the children's runs spread over the instances (the least loaded takes
each one, docs/instances.md).

Measured:

- **spawn throughput**: children ended and their completions delivered to their parents, per
  second, from the first ``chat.send`` to the last task ``delivered``;
- **fan-out latency**: for every ``sessions.changed`` of a child, the time from its ``ts`` (the
  publishing instance's clock; all processes share this host's) to its arrival at each
  subscriber — p50 and p99 over every event and every subscriber;
- **correctness**: every child's task ended ``succeeded`` and delivered once, and every
  subscriber heard every child end.

Target: correctness with every instance added — no lost, repeated or unheard child. The
throughput relative to one instance is printed too; on this two-core machine the processes
share the same CPU, so instances are not expected to add throughput here, only to lose none.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from clawline.client.connection import GatewayClient
from clawline.client.event_queue import GatewayEvent
from clawline.store import open_store
from clawline.store.base import Store

PG_URL = os.environ.get("CLAWLINE_BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")
TOKEN = "bench-instances-token-0123456789"
READY = re.compile(r"clawline gateway listening on (ws://127\.0\.0\.1:\d+)\n")
CONFIG = """
[gateway]
instanceLeaseMs = 5000

[agents]
echo_delay_ms = 0

[agents.defaults.subagents]
maxChildrenPerAgent = {per_parent}
maxConcurrent = 200
"""


@dataclass
class Figures:
    instances: int
    children: int
    elapsed_s: float
    latencies_ms: list[float]
    succeeded: int
    announced_once: bool
    unheard: int
    spread: dict[str, int]

    @property
    def rate(self) -> float:
        return self.children / self.elapsed_s

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0

    @property
    def correct(self) -> bool:
        return self.succeeded == self.children and self.announced_once and self.unheard == 0


def announced_run_ids(store: Store, session_key: str) -> list[str]:
    """The child run ids of every completion delivered to the session, in order."""
    entry = store.get(session_key)
    if entry is None:
        return []
    found: list[str] = []
    for event in store.events(entry.session_id, limit=10_000):
        announce = event.data.get("announce") if event.type == "message" else None
        if isinstance(announce, dict) and isinstance(announce.get("runIds"), list):
            found.extend(str(run_id) for run_id in announce["runIds"])
    return found


@contextlib.asynccontextmanager
async def gateways(
    count: int, store_url: str, work: Path, per_parent: int
) -> AsyncIterator[list[str]]:
    processes: list[asyncio.subprocess.Process] = []
    urls: list[str] = []
    try:
        for index in range(count):
            state = work / f"state-{index}"
            state.mkdir(parents=True)
            (state / "config.toml").write_text(CONFIG.format(per_parent=per_parent))
            env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWLINE_")}
            env.update(
                CLAWLINE_STATE_DIR=str(state),
                CLAWLINE_STORE_URL=store_url,
                CLAWLINE_GATEWAY_TOKEN=TOKEN,
            )
            log = (work / f"gateway-{index}.log").open("ab")
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "clawline", "gateway", "run", "--port", "0",
                env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=log,
            )  # fmt: skip
            processes.append(process)
            assert process.stdout is not None
            line = (await asyncio.wait_for(process.stdout.readline(), 30)).decode()
            match = READY.fullmatch(line)
            if match is None:
                raise SystemExit(f"gateway {index} did not start: {line!r}")
            urls.append(match.group(1))
        yield urls
    finally:
        for process in processes:
            if process.returncode is None:
                process.terminate()
        for process in processes:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), 20)
            if process.returncode is None:
                process.kill()
                await process.wait()


async def bench(count: int, args: argparse.Namespace, work: Path) -> Figures:
    schema = f"bench_instances_{uuid.uuid4().hex[:8]}"
    store_url = f"{PG_URL}?schema={schema}"
    parents = [f"agent:main:bench-{n}" for n in range(args.parents)]
    children = args.parents * args.per_parent
    latencies: list[float] = []
    ended: list[set[str]] = []
    try:
        async with gateways(count, store_url, work / f"n{count}", args.per_parent) as urls:
            clients = [await GatewayClient.connect(url, token=TOKEN) for url in urls]
            try:
                for client in clients:
                    heard: set[str] = set()
                    ended.append(heard)

                    def on_event(event: GatewayEvent, heard: set[str] = heard) -> None:
                        payload = event.payload
                        if event.name != "sessions.changed" or not isinstance(payload, dict):
                            return
                        key = payload.get("sessionKey")
                        ts = payload.get("ts")
                        if not isinstance(key, str) or ":subagent:" not in key:
                            return
                        if isinstance(ts, int):
                            latencies.append(time.time() * 1000 - ts)
                        if payload.get("status") == "done":
                            heard.add(key)

                    client.on_event(on_event)
                    await client.request("sessions.subscribe", {})
                first = clients[0]
                started = time.perf_counter()
                await asyncio.gather(
                    *(
                        first.request(
                            "chat.send",
                            {
                                "sessionKey": parent,
                                "message": f"spawn {args.per_parent} x: bench",
                                "idempotencyKey": f"bench-{parent}",
                            },
                        )
                        for parent in parents
                    )
                )
                deadline = time.monotonic() + args.timeout
                while True:
                    listed = await first.request("tasks.list", {"limit": 500})
                    assert isinstance(listed, dict)
                    tasks = listed["tasks"]
                    done = [t for t in tasks if t["deliveryStatus"] == "delivered"]
                    if len(done) >= children:
                        break
                    if time.monotonic() > deadline:
                        raise SystemExit(f"only {len(done)} / {children} children delivered")
                    await asyncio.sleep(0.05)
                elapsed = time.perf_counter() - started
                heard_by = time.monotonic() + 10  # the last events may still be on their way
                while time.monotonic() < heard_by and any(len(h) < children for h in ended):
                    await asyncio.sleep(0.05)
            finally:
                for client in clients:
                    await client.close()
        store = open_store(store_url)
        try:
            records = [run for parent in parents for run in store.runs.for_requester(parent)]
            announced = Counter(
                run_id for parent in parents for run_id in announced_run_ids(store, parent)
            )
            succeeded = sum(
                1
                for run in records
                if run.outcome is not None and run.outcome.get("status") == "ok"
            )
            spread = Counter(run.instance_id or "" for run in records)
        finally:
            store.close()
        keys = {run.child_session_key for run in records}
        return Figures(
            instances=count,
            children=children,
            elapsed_s=elapsed,
            latencies_ms=latencies,
            succeeded=succeeded,
            announced_once=announced == Counter({run.run_id: 1 for run in records}),
            unheard=sum(len(keys - heard) for heard in ended),
            spread=dict(spread),
        )
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--instances", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--parents", type=int, default=10)
    parser.add_argument("--per-parent", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    results: list[Figures] = []
    with tempfile.TemporaryDirectory() as directory:
        for count in args.instances:
            figures = asyncio.run(bench(count, args, Path(directory)))
            results.append(figures)
            print(f"instances              {figures.instances}")
            spread = sorted(figures.spread.values())
            print(f"children               {figures.children} (per instance: {spread})")
            print(
                f"spawn throughput       {figures.rate:.1f} children/s ({figures.elapsed_s:.1f} s)"
            )
            p50, p99 = figures.percentile(0.5), figures.percentile(0.99)
            print(f"fan-out p50 / p99      {p50:.0f} / {p99:.0f} ms")
            print(
                f"correct                {figures.correct} (succeeded {figures.succeeded},"
                f" announced once {figures.announced_once}, unheard {figures.unheard})"
            )
            print()  # fmt: skip
    base = results[0].rate
    for figures in results[1:]:
        print(f"throughput, {figures.instances} vs {results[0].instances}:"
              f" {figures.rate / base:.0%}")  # fmt: skip
    met = all(figures.correct for figures in results)
    print(f"target (correct with every instance added): {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
