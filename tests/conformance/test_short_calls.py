"""Short store calls (``StoreWorkers.run_short``): on SQLite they run at once on the event loop's
thread when the workers are idle, never ahead of a call made before them, and never while
another thread holds the store; on PostgreSQL they always go to a worker. The WAL's
checkpoints then run on a worker, not inside a commit on the loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import Store
from clawline.store.sqlite.store import SQLiteStore
from clawline.store.workers import StoreWorkers
from tests.conformance.conftest import Backend


def where() -> int:
    return threading.get_ident()


async def test_a_short_call_runs_where_it_is_made_on_sqlite_only(
    backend: Backend, store: Store
) -> None:
    workers = StoreWorkers(store, short_calls_inline=True)
    try:
        here = threading.get_ident()
        ran_on = await workers.run_short(where)
        if backend.name == "sqlite":
            assert ran_on == here
            assert workers.inline_calls == 1
        else:
            assert ran_on != here
            assert workers.inline_calls == 0
        assert await workers.run(where) != here  # run() always hands it over
        assert workers.calls == 2
    finally:
        workers.close()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "short.db")
    yield store
    store.close()


async def test_a_short_call_does_not_overtake_one_made_before_it(
    sqlite_store: SQLiteStore,
) -> None:
    workers = StoreWorkers(sqlite_store, short_calls_inline=True)
    order: list[str] = []
    release = threading.Event()

    def first() -> None:
        release.wait(5)
        order.append("first")

    def second() -> int:
        order.append("second")
        return threading.get_ident()

    try:
        earlier = asyncio.ensure_future(workers.run(first))
        await asyncio.sleep(0)  # handed over, waiting in the worker
        later = asyncio.ensure_future(workers.run_short(second))
        await asyncio.sleep(0.05)
        assert order == []  # the short call waits behind the earlier one ...
        release.set()
        await earlier
        assert await later != threading.get_ident()  # ... on the worker
        assert order == ["first", "second"]
        assert workers.inline_calls == 0
    finally:
        release.set()
        workers.close()


async def test_a_short_call_does_not_wait_for_another_thread_on_the_loop(
    sqlite_store: SQLiteStore,
) -> None:
    workers = StoreWorkers(sqlite_store, short_calls_inline=True)
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:  # another thread using the store outside the workers
        with sqlite_store.transaction():
            taken.set()
            release.wait(5)

    def read_where() -> int:
        sqlite_store.get("agent:main:main")  # needs the store: waits for the other thread
        return threading.get_ident()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert taken.wait(5)
        short = asyncio.ensure_future(workers.run_short(read_where))
        await asyncio.sleep(0.05)
        assert not short.done()  # on a worker, waiting there: the loop runs on
        release.set()
        assert await short != threading.get_ident()
    finally:
        release.set()
        holder.join(5)
        workers.close()


class CheckpointWatch(SQLiteStore):
    """The real store, noting where each of its deferred checkpoints ran."""

    ran_on: list[int]

    def checkpoint(self) -> None:
        self.ran_on.append(threading.get_ident())
        super().checkpoint()


async def test_checkpoints_run_on_a_worker_not_in_a_commit_on_the_loop(tmp_path: Path) -> None:
    store = CheckpointWatch(tmp_path / "watched.db")
    store.ran_on = []
    workers = StoreWorkers(store, short_calls_inline=True)
    catalog = SessionCatalog(store)
    try:
        assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
        for n in range(200):
            await workers.run_short(catalog.patch, f"agent:main:s{n}", {})
        # (a patch that finds a checkpoint running goes to the worker instead)
        assert workers.inline_calls > 150
        await workers.run(lambda: None)  # after the checkpoints handed over
        assert len(store.ran_on) >= 2  # 200 commits, one due every 64
        assert threading.get_ident() not in store.ran_on
    finally:
        workers.close()
        store.close()
