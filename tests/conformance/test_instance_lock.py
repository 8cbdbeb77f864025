"""The store's instance lock (clawline.store.instance_lock). On SQLite: taken, refused to a
second holder with the first one's description, free again once released, and free once a
holder process dies however it dies. On PostgreSQL several gateways share the store: the lock
is never refused and proves nothing (the instances coordinate by lease, clawline.instances)."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawline.store.base import Store
from clawline.store.instance_lock import HOLDER_WAIT_S, InstanceHolder, InstanceLock, StoreInUse
from clawline.store.postgres.store import PostgresStore
from clawline.store.sqlite.instance_lock import lock_path_for
from clawline.store.sqlite.store import SQLiteStore
from tests.conformance.conftest import Backend, SQLiteBackend
from tests.conftest import PgSchemas

HOLDER_SCRIPT = """
import asyncio, sys
from clawline.store import open_store
from clawline.store.instance_lock import InstanceHolder

async def main() -> None:
    store = open_store(sys.argv[1])
    lock = store.instance_lock()
    await lock.acquire(InstanceHolder.this_process().serving("ws://127.0.0.1:1"))
    print("held", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[Backend]:
    """SQLite only: the one backend whose lock excludes a second gateway."""
    chosen = SQLiteBackend(tmp_path)
    yield chosen
    chosen.close()


def holder(pid: int = 4242, url: str | None = None) -> InstanceHolder:
    return InstanceHolder(pid=pid, host="host-a", started_at_ms=1_796_155_516_000, url=url)


def store_url(backend: Backend) -> str:
    store = backend.store
    if isinstance(store, SQLiteStore):
        return f"sqlite:///{backend.location}"
    assert isinstance(store, PostgresStore)
    return f"{store.location}?schema={backend.location}"


def held(lock: InstanceLock) -> bool:
    return lock.held  # a call, so the type checker does not keep a narrowed ``held``


async def refused(store: Store) -> StoreInUse:
    lock = store.instance_lock()
    with pytest.raises(StoreInUse) as caught:
        await lock.acquire(holder(pid=1))
    assert not lock.held
    return caught.value


async def test_the_lock_is_refused_to_a_second_holder_until_it_is_released(
    backend: Backend,
) -> None:
    first = backend.store.instance_lock()
    await first.acquire(holder())
    assert first.held
    try:
        error = await refused(backend.open())
        assert error.holder == holder()
        assert str(error) == (
            "this store is in use by another gateway: pid 4242 on host-a since"
            " 2026-12-01T20:05:16Z (starting)"
        )
        await first.record(holder(url="ws://127.0.0.1:18790"))
        error = await refused(backend.open())
        assert str(error).endswith("since 2026-12-01T20:05:16Z (ws://127.0.0.1:18790)")
        assert error.holder == holder(url="ws://127.0.0.1:18790")
        with pytest.raises(RuntimeError, match="already held"):
            await first.acquire(holder())
        assert first.held
    finally:
        await first.release()
    assert not held(first)
    await first.release()  # idempotent

    second = backend.open().instance_lock()
    await second.acquire(holder(pid=7))
    try:
        assert (await refused(backend.store)).holder == holder(pid=7)
    finally:
        await second.release()


async def test_a_record_left_by_an_earlier_holder_is_not_believed(backend: Backend) -> None:
    """A refusal names the holder only when the record is the live holder's; otherwise it says
    it does not know (after waiting :data:`HOLDER_WAIT_S` for the record)."""
    lock = backend.store.instance_lock()
    await lock.acquire(holder())
    try:
        stale = InstanceHolder(dead_pid(), socket.gethostname(), holder().started_at_ms)
        lock_path_for(Path(backend.location).resolve()).write_bytes(stale.encode())
        started = time.monotonic()
        error = await refused(backend.open())
        assert time.monotonic() - started >= HOLDER_WAIT_S
        assert error.holder is None
        assert str(error) == "this store is in use by another gateway (it did not say which)"
    finally:
        await lock.release()


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(timeout=20)
    return process.pid


async def test_a_lock_held_by_a_killed_process_is_free(backend: Backend) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        HOLDER_SCRIPT,
        store_url(backend),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 20)
        assert line == b"held\n"
        error = await refused(backend.store)
        assert error.holder is not None
        assert (error.holder.pid, error.holder.host) == (process.pid, socket.gethostname())
        assert error.holder.url == "ws://127.0.0.1:1"
        process.send_signal(signal.SIGKILL)
        assert await asyncio.wait_for(process.wait(), 10) == -signal.SIGKILL
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    lock = backend.store.instance_lock()
    # The kernel releases a flock at once; the server ends the session when it reads the EOF.
    deadline = time.monotonic() + 10
    while True:
        try:
            await lock.acquire(holder())
            break
        except StoreInUse:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)
    try:
        assert lock.held
        assert (await refused(backend.open())).holder == holder()
    finally:
        await lock.release()


@pytest.mark.postgres
async def test_the_postgres_lock_is_shared(pg_url: str, pg_schemas: PgSchemas) -> None:
    schema = pg_schemas.new("shared")
    store = PostgresStore(pg_url, schema=schema)
    again = PostgresStore(pg_url, schema=schema)
    try:
        first, second = store.instance_lock(), again.instance_lock()
        assert not first.exclusive
        assert not second.exclusive
        await first.acquire(holder())
        await second.acquire(holder(pid=7))  # not refused
        assert first.held
        assert second.held
        await first.release()
        await second.release()
    finally:
        store.close()
        again.close()
