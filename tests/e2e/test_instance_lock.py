"""Gateway processes on one store (security.md, clawline.instances).

SQLite (one state directory): a second gateway process exits at once with one line naming the
holder, and the holder's runs go on untouched. PostgreSQL (one schema, two state directories):
a second gateway serves beside the first and leaves its runs alone; a gateway another instance
took over stops and exits 1. Both: once the first gateway is killed, the next one recovers the
runs it left as lost (on PostgreSQL once its lease lapsed).

The gateways are real processes (``python -m clawline gateway run``) with the offline model;
the store is read directly after they stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import socket
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from clawline.client.connection import GatewayClient
from clawline.records.task import TaskRecord
from clawline.store import open_store
from clawline.store.base import Store
from tests.conftest import PgSchemas
from tests.e2e.support import all_tasks, clean_env, gateway_process, message_events, until

TOKEN = "instance-lock-token-0123"
PARENT = "agent:main:main"
CHILDREN = 10
LEASE_MS = 1500
CONFIG = f"""
[gateway]
instanceLeaseMs = {LEASE_MS}

[agents]
echo_delay_ms = 0

[agents.defaults.subagents]
maxChildrenPerAgent = {CHILDREN}
maxConcurrent = {2 * CHILDREN}
"""
REFUSAL = re.compile(
    r"error: this store is in use by another gateway: pid (\d+) on (\S+) since"
    r" \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \((ws://127\.0\.0\.1:\d+)\)"
)
LOST_ERROR = "lost: gateway restarted"


@dataclass(frozen=True, slots=True)
class Deployment:
    """Where gateway A and gateway B keep their state, on one store."""

    state_a: Path
    state_b: Path
    store_url: str | None
    """``None``: the SQLite store of the (shared) state directory."""

    def env(self, state: Path) -> dict[str, str]:
        extra = {"CLAWLINE_GATEWAY_TOKEN": TOKEN}
        if self.store_url is not None:
            extra["CLAWLINE_STORE_URL"] = self.store_url
        return clean_env(state, **extra)

    @contextlib.contextmanager
    def opened(self) -> Iterator[Store]:
        store = open_store(self.store_url, default_sqlite_path=self.state_a / "clawline.db")
        try:
            yield store
        finally:
            store.close()


def prepared(deployment: Deployment) -> Deployment:
    for state in {deployment.state_a, deployment.state_b}:
        state.mkdir()
        (state / "config.toml").write_text(CONFIG, encoding="utf-8")
    return deployment


def sqlite_deployment(tmp_path: Path) -> Deployment:
    state = tmp_path / "state"
    return prepared(Deployment(state, state, None))


def postgres_deployment(tmp_path: Path, pg_url: str, schemas: PgSchemas) -> Deployment:
    url = f"{pg_url}?schema={schemas.new('lock')}"
    return prepared(Deployment(tmp_path / "state-a", tmp_path / "state-b", url))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Deployment:
    if request.param == "sqlite":
        return sqlite_deployment(tmp_path)
    pg_url: str = request.getfixturevalue("pg_url")
    return postgres_deployment(tmp_path, pg_url, request.getfixturevalue("pg_schemas"))


@dataclass(frozen=True, slots=True)
class Attempt:
    code: int
    stdout: str
    stderr: str


async def start_and_wait(env: Mapping[str, str]) -> Attempt:
    """Run a gateway process that is expected to give up; its exit code and output."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "clawline",
        "gateway",
        "run",
        "--port",
        "0",
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return Attempt(process.returncode, out.decode(), err.decode())


async def spawn_children(client: GatewayClient, sleep_ms: int) -> None:
    params = {
        "sessionKey": PARENT,
        "message": f"spawn {CHILDREN} x: sleep {sleep_ms}",
        "idempotencyKey": "wave",
    }
    ack = await client.request("chat.send", params)
    assert isinstance(ack, dict)
    assert ack["status"] == "started", ack


async def tasks_of(client: GatewayClient) -> list[dict[str, Any]]:
    listed = await client.request("tasks.list", {"limit": 100})
    assert isinstance(listed, dict)
    tasks: list[dict[str, Any]] = listed["tasks"]
    return tasks


async def all_running(client: GatewayClient) -> bool:
    tasks = await tasks_of(client)
    return len(tasks) == CHILDREN and all(task["status"] == "running" for task in tasks)


async def settled(client: GatewayClient) -> bool:
    """Every child ended and its completion delivered, and no session has a run (the parent has
    taken its turn on the deliveries)."""
    tasks = await tasks_of(client)
    sessions = await client.request("sessions.list", {"limit": 100})
    assert isinstance(sessions, dict)
    busy = [row["key"] for row in sessions["sessions"] if row.get("hasActiveRun")]
    ended = all(
        task["status"] not in ("queued", "running") and task["deliveryStatus"] == "delivered"
        for task in tasks
    )
    return len(tasks) == CHILDREN and ended and not busy


def runtime_file(state: Path) -> object:
    return json.loads((state / "gateway.json").read_text(encoding="utf-8"))


def announced_run_ids(store: Store) -> Counter[str]:
    """How often each run id appears in a completion delivered to the parent."""
    return Counter(
        run_id
        for _, data in message_events(store, PARENT)
        if "announce" in data
        for run_id in data["announce"]["runIds"]
    )


def assert_children_ended(store: Store, *, status: str) -> list[TaskRecord]:
    """Every child's run ended, its task has ``status``, and its completion was delivered to
    the parent exactly once."""
    runs = store.runs.for_requester(PARENT)
    tasks = all_tasks(store)
    assert len(runs) == CHILDREN
    assert all(not run.active for run in runs)
    assert sorted(task.run_id or "" for task in tasks) == sorted(run.run_id for run in runs)
    assert [task.status for task in tasks] == [status] * CHILDREN, tasks
    assert [task.delivery_status for task in tasks] == ["delivered"] * CHILDREN
    rows = [store.inbox.by_run(run.run_id) for run in runs]
    assert all(row is not None and row.delivery_seq is not None for row in rows)
    assert announced_run_ids(store) == Counter({run.run_id: 1 for run in runs})
    return tasks


async def test_a_second_gateway_on_sqlite_is_refused_and_leaves_the_holders_runs_alone(
    tmp_path: Path,
) -> None:
    deployment = sqlite_deployment(tmp_path)
    async with gateway_process(deployment.env(deployment.state_a), tmp_path / "a.log") as a:
        client = await GatewayClient.connect(a.url, token=TOKEN)
        try:
            await spawn_children(client, sleep_ms=6000)
            await until(lambda: all_running(client), timeout=15, what="running children")

            second = await start_and_wait(deployment.env(deployment.state_b))

            assert await all_running(client), "the children ended before the second gateway"
            assert second.code == 1, second
            assert second.stdout == ""
            lines = second.stderr.splitlines()
            assert len(lines) == 1, second.stderr
            refusal = REFUSAL.fullmatch(lines[0])
            assert refusal is not None, lines[0]
            assert refusal.groups() == (str(a.process.pid), socket.gethostname(), a.url)
            assert runtime_file(deployment.state_a) == {"url": a.url, "pid": a.process.pid}

            await until(lambda: settled(client), timeout=30, what="every completion delivered")
        finally:
            await client.close()
        assert await a.terminate() == 0, a.log()
    assert not (deployment.state_a / "gateway.json").exists()
    assert "recovery:" not in a.log()

    with deployment.opened() as store:
        tasks = assert_children_ended(store, status="succeeded")
        runs = store.runs.for_requester(PARENT)
    assert all(task.error is None for task in tasks)
    assert all(run.outcome == {"status": "ok"} for run in runs), runs
    assert all(run.frozen_result_text for run in runs)


async def test_once_the_holder_is_killed_the_next_gateway_starts_and_recovers(
    deployment: Deployment, tmp_path: Path
) -> None:
    async with gateway_process(deployment.env(deployment.state_a), tmp_path / "a.log") as a:
        client = await GatewayClient.connect(a.url, token=TOKEN)
        try:
            await spawn_children(client, sleep_ms=60_000)
            await until(lambda: all_running(client), timeout=15, what="running children")
        finally:
            await client.close()
        assert await a.kill() == -signal.SIGKILL

    async with gateway_process(deployment.env(deployment.state_b), tmp_path / "b.log") as b:
        assert runtime_file(deployment.state_b) == {"url": b.url, "pid": b.process.pid}
        client = await GatewayClient.connect(b.url, token=TOKEN)
        try:
            await until(lambda: settled(client), timeout=30, what="every completion delivered")
        finally:
            await client.close()
        assert await b.terminate() == 0, b.log()
    assert f"recovery: {CHILDREN} subagent run(s) lost" in b.log()

    with deployment.opened() as store:
        tasks = assert_children_ended(store, status="lost")
    assert [task.error for task in tasks] == [LOST_ERROR] * CHILDREN


async def instance_id(client: GatewayClient) -> str:
    health = await client.request("health", {})
    assert isinstance(health, dict)
    value = health["instanceId"]
    assert isinstance(value, str)
    return value


@pytest.mark.postgres
async def test_a_second_gateway_on_postgres_serves_beside_and_leaves_the_first_ones_runs_alone(
    tmp_path: Path, pg_url: str, pg_schemas: PgSchemas
) -> None:
    deployment = postgres_deployment(tmp_path, pg_url, pg_schemas)
    async with gateway_process(deployment.env(deployment.state_a), tmp_path / "a.log") as a:
        client = await GatewayClient.connect(a.url, token=TOKEN)
        try:
            await spawn_children(client, sleep_ms=4 * LEASE_MS)
            await until(lambda: all_running(client), timeout=15, what="running children")
            async with gateway_process(deployment.env(deployment.state_b), tmp_path / "b.log") as b:
                other = await GatewayClient.connect(b.url, token=TOKEN)
                try:
                    assert await instance_id(other) != await instance_id(client)
                    assert await all_running(other), "the second gateway ended A's children"
                    await until(lambda: settled(client), timeout=30, what="every completion")
                finally:
                    await other.close()
                assert await b.terminate() == 0, b.log()
        finally:
            await client.close()
        assert await a.terminate() == 0, a.log()
    assert "recovery:" not in a.log()
    assert "recovery:" not in b.log()
    with deployment.opened() as store:
        tasks = assert_children_ended(store, status="succeeded")
    assert all(task.error is None for task in tasks)


@pytest.mark.postgres
async def test_a_gateway_process_taken_over_by_another_instance_stops_and_exits_1(
    tmp_path: Path, pg_url: str, pg_schemas: PgSchemas
) -> None:
    schema = pg_schemas.new("lost")
    deployment = Deployment(tmp_path / "state", tmp_path / "state", f"{pg_url}?schema={schema}")
    deployment.state_a.mkdir()
    async with gateway_process(deployment.env(deployment.state_a), tmp_path / "a.log") as a:
        client = await GatewayClient.connect(a.url, token=TOKEN)
        try:
            taken = await instance_id(client)
        finally:
            await client.close()
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(
                f'UPDATE "{schema}".gateway_instances SET recovered_at = 1,'
                " recovered_by = 'elsewhere' WHERE instance_id = %s",
                (taken,),
            )
        assert await asyncio.wait_for(a.process.wait(), 30) == 1, a.log()
    lines = a.log().splitlines()
    assert any("CRITICAL" in line and "lost the instance lease" in line for line in lines)
    assert lines[-1].startswith("error: the gateway stopped: it lost the instance lease of ")
    assert lines[-1].endswith(f"(instance {taken} was taken over by another instance)")
    assert "Traceback" not in a.log()
    assert not (deployment.state_a / "gateway.json").exists()
