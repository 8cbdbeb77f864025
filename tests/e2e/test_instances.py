"""Three gateway processes on one PostgreSQL schema (docs/instances.md).

A client on A spawns 100 children; their runs spread over A, B and C. A client on B hears every
``sessions.changed`` of them, in one global order. C is SIGKILLed with children in flight:
within the lease every task is terminal, every completion reaches the parent exactly once, and
no run id runs twice. The same ``chat.send`` idempotency key sent to A and to B starts one
run. The gateways are real processes (``python -m clawline gateway run``) with the offline
model.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clawline.client.connection import GatewayClient
from clawline.client.event_queue import GatewayEvent
from clawline.store import open_store
from clawline.store.base import Store
from tests.conftest import PgSchemas
from tests.e2e.support import (
    GatewayProcess,
    all_tasks,
    clean_env,
    gateway_process,
    message_events,
    until,
)

pytestmark = pytest.mark.postgres

TOKEN = "instances-token-0123456789"
PARENT = "agent:main:main"
PARENTS = tuple(f"agent:main:wave-{n}" for n in range(5))
PER_PARENT = 20
"""A session may have at most 20 active children (OpenClaw's ``maxChildrenPerAgent`` cap)."""
CHILDREN = len(PARENTS) * PER_PARENT
LEASE_MS = 2000
SLEEP_MS = 8000
CONFIG = f"""
[gateway]
instanceLeaseMs = {LEASE_MS}

[agents]
echo_delay_ms = 0

[agents.defaults.subagents]
maxChildrenPerAgent = {PER_PARENT}
maxConcurrent = {CHILDREN}
"""


@dataclass
class Cluster:
    store_url: str
    gateways: dict[str, GatewayProcess]
    instance_ids: dict[str, str]

    def store(self) -> Store:
        return open_store(self.store_url)


async def instance_id(url: str) -> str:
    async with await GatewayClient.connect(url, token=TOKEN) as client:
        health = await client.request("health", {})
    assert isinstance(health, dict)
    value = health["instanceId"]
    assert isinstance(value, str)
    return value


@contextlib.asynccontextmanager
async def cluster(tmp_path: Path, store_url: str, names: str = "abc") -> AsyncIterator[Cluster]:
    async with contextlib.AsyncExitStack() as stack:
        gateways: dict[str, GatewayProcess] = {}
        for name in names:
            state = tmp_path / f"state-{name}"
            state.mkdir()
            (state / "config.toml").write_text(CONFIG, encoding="utf-8")
            env = clean_env(state, CLAWLINE_GATEWAY_TOKEN=TOKEN, CLAWLINE_STORE_URL=store_url)
            gateways[name] = await stack.enter_async_context(
                gateway_process(env, tmp_path / f"{name}.log")
            )
        ids = {name: await instance_id(gateway.url) for name, gateway in gateways.items()}
        yield Cluster(store_url, gateways, ids)


def records_of(store_url: str, instance_id: str, *, active: bool) -> int:
    """How many of the children's records ``instance_id`` answers for (active ones only)."""
    store = open_store(store_url)
    try:
        return sum(
            1
            for parent in PARENTS
            for record in store.runs.for_requester(parent)
            if record.instance_id == instance_id and (record.active or not active)
        )
    finally:
        store.close()


async def tasks_of(client: GatewayClient) -> list[dict[str, Any]]:
    listed = await client.request("tasks.list", {"limit": 200})
    assert isinstance(listed, dict)
    tasks: list[dict[str, Any]] = listed["tasks"]
    return tasks


def records_by_instance(store_url: str) -> Counter[str]:
    """How many of the children's records each instance answers (or answered) for."""
    store = open_store(store_url)
    try:
        return Counter(
            record.instance_id or ""
            for parent in PARENTS
            for record in store.runs.for_requester(parent)
        )
    finally:
        store.close()


async def test_three_gateways_spread_a_wave_and_survive_losing_one(
    tmp_path: Path, pg_url: str, pg_schemas: PgSchemas
) -> None:
    store_url = f"{pg_url}?schema={pg_schemas.new('three')}"
    async with cluster(tmp_path, store_url) as three:
        a, b, c = (three.gateways[name] for name in "abc")
        on_a = await GatewayClient.connect(a.url, token=TOKEN)
        on_b = await GatewayClient.connect(b.url, token=TOKEN)
        heard: list[GatewayEvent] = []
        on_b.on_event(lambda event: heard.append(event) if event.seq is not None else None)
        try:
            await on_b.request("sessions.subscribe", {})
            for parent in PARENTS:
                ack = await on_a.request(
                    "chat.send",
                    {
                        "sessionKey": parent,
                        "message": f"spawn {PER_PARENT} x: sleep {SLEEP_MS}",
                        "idempotencyKey": f"wave-{parent}",
                    },
                )
                assert isinstance(ack, dict)
                assert ack["status"] == "started", ack

            async def all_running() -> bool:
                tasks = await tasks_of(on_a)
                return len(tasks) == CHILDREN and all(t["status"] == "running" for t in tasks)

            await until(all_running, timeout=60, what="every child running")
            spread = records_by_instance(store_url)
            assert set(spread) == set(three.instance_ids.values()), spread
            assert sum(spread.values()) == CHILDREN
            on_c = spread[three.instance_ids["c"]]

            assert await c.kill() == -signal.SIGKILL
            killed_at = time.monotonic()

            async def cs_children_ended() -> bool:
                return records_of(store_url, three.instance_ids["c"], active=True) == 0

            await until(cs_children_ended, timeout=30, what="C's children ended by another")
            recovered_after_s = time.monotonic() - killed_at

            async def settled() -> bool:
                tasks = await tasks_of(on_b)
                return len(tasks) == CHILDREN and all(
                    t["status"] not in ("queued", "running") and t["deliveryStatus"] == "delivered"
                    for t in tasks
                )

            await until(settled, timeout=60, what="every task terminal and delivered")
            terminal_after_s = time.monotonic() - killed_at
        finally:
            await on_a.close()
            await on_b.close()
        for name in "ab":
            assert await three.gateways[name].terminate() == 0, three.gateways[name].log()

    store = open_store(store_url)
    try:
        tasks = all_tasks(store)
        runs = [run for parent in PARENTS for run in store.runs.for_requester(parent)]
        announced = Counter(
            run_id
            for parent in PARENTS
            for _, data in message_events(store, parent)
            if "announce" in data
            for run_id in data["announce"]["runIds"]
        )
    finally:
        store.close()
    # C's children: within the lease (plus a heartbeat for the take-over, and the recovery);
    # the others: when their runs end
    print(f"C's children ended {recovered_after_s:.2f} s after the SIGKILL (lease {LEASE_MS} ms)")
    assert recovered_after_s < LEASE_MS / 1000 + 1.5, recovered_after_s
    assert terminal_after_s < SLEEP_MS / 1000 + 5, terminal_after_s
    statuses = Counter(task.status for task in tasks)
    assert statuses["lost"] == on_c, statuses
    assert statuses["succeeded"] == CHILDREN - on_c, statuses
    assert len({run.run_id for run in runs}) == CHILDREN  # no run id twice
    assert announced == Counter({run.run_id: 1 for run in runs})  # each completion once

    # B heard every child's changes in the one global order
    seqs = [event.seq for event in heard if event.seq is not None]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(seqs)
    changed = [
        event.payload
        for event in heard
        if event.name == "sessions.changed" and isinstance(event.payload, dict)
    ]
    children = {run.child_session_key for run in runs}
    created = {p["sessionKey"] for p in changed if p.get("reason") == "create"}
    assert children <= created, len(children - created)
    finished = {p["sessionKey"] for p in changed if p.get("status") in TERMINAL}
    assert children <= finished, len(children - finished)


TERMINAL = ("done", "failed", "killed", "timeout")


async def test_one_idempotency_key_sent_to_two_gateways_starts_one_run(
    tmp_path: Path, pg_url: str, pg_schemas: PgSchemas
) -> None:
    store_url = f"{pg_url}?schema={pg_schemas.new('key')}"
    async with cluster(tmp_path, store_url, "ab") as two:
        a, b = two.gateways["a"], two.gateways["b"]
        params = {"sessionKey": PARENT, "message": "hello once: sleep 1500", "idempotencyKey": "k1"}
        async with (
            await GatewayClient.connect(a.url, token=TOKEN) as on_a,
            await GatewayClient.connect(b.url, token=TOKEN) as on_b,
        ):
            first, second = await asyncio.gather(
                on_a.request("chat.send", params), on_b.request("chat.send", params)
            )
            assert isinstance(first, dict)
            assert isinstance(second, dict)
            assert sorted([first["status"], second["status"]]) == ["in_flight", "started"]
            assert first["runId"] == second["runId"] == "k1"
            again = await on_b.request("chat.send", params)  # running or done: never again
            assert isinstance(again, dict)
            assert again["status"] in ("in_flight", "ok"), again
        for gateway in (a, b):
            assert await gateway.terminate() == 0, gateway.log()
    store = open_store(store_url)
    try:
        user_messages = [
            data for _, data in message_events(store, PARENT) if data.get("role") == "user"
        ]
    finally:
        store.close()
    assert len(user_messages) == 1
