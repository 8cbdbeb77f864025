"""``serve`` holds the store's instance lock (security.md, "One gateway per store"): a second
gateway on the store is refused before it serves, ``gateway.json`` belongs to the holder, and a
gateway that loses its PostgreSQL lock session stops."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import psycopg
import pytest
from psycopg.rows import TupleRow

from clawline.store.instance_lock import StoreInUse, StoreLockLost
from clawline.store.postgres.instance_lock import INSTANCE_LOCK_CLASS
from clawline.store.postgres.migrations import advisory_key
from clawline.store.sqlite.instance_lock import lock_path_for
from clawline.testing.live_gateway import running_gateway
from tests.conftest import PgSchemas
from tests.e2e.support import until

_OID = 0xFFFFFFFF


def runtime(state: Path) -> object:
    return json.loads((state / "gateway.json").read_text(encoding="utf-8"))


async def test_a_second_gateway_on_the_state_directory_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with running_gateway(state) as first:
        with pytest.raises(StoreInUse) as refused:
            async with running_gateway(state):
                pytest.fail("a second gateway served the store")
        holder = refused.value.holder
        assert holder is not None
        assert (holder.pid, holder.url) == (os.getpid(), first.url)
        assert str(refused.value).endswith(f"({first.url})")
        assert runtime(state) == {"url": first.url, "pid": os.getpid()}
        assert first.gateway.ready
    assert not (state / "gateway.json").exists()
    assert lock_path_for((state / "clawline.db").resolve()).read_bytes() == b""
    async with running_gateway(state) as again:  # free once the first stopped
        assert runtime(state) == {"url": again.url, "pid": os.getpid()}


async def test_the_runtime_file_is_kept_when_it_names_another_gateway(tmp_path: Path) -> None:
    state = tmp_path / "state"
    other = json.dumps({"url": "ws://127.0.0.1:1", "pid": os.getpid() + 1})
    async with running_gateway(state):
        (state / "gateway.json").write_text(other, encoding="utf-8")
    assert (state / "gateway.json").read_text(encoding="utf-8") == other


async def serve_until_the_lock_session_is_ended(
    state: Path, store_url: str, admin: psycopg.Connection[TupleRow], schema: str
) -> None:
    """Serve, end the lock's database session from outside, wait for the gateway to stop."""
    key = (INSTANCE_LOCK_CLASS & _OID, advisory_key(schema) & _OID)
    async with running_gateway(state, store_url=store_url) as gateway:
        assert runtime(state) == {"url": gateway.url, "pid": os.getpid()}
        ended = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'"
            " AND granted AND objsubid = 2 AND classid::int8 = %s AND objid::int8 = %s",
            key,
        ).fetchall()
        assert ended == [(True,)]

        async def stopped() -> bool:
            return not gateway.gateway.ready

        await until(stopped, timeout=10, what="the gateway to stop")


@pytest.mark.postgres
async def test_a_gateway_that_loses_its_lock_session_stops(
    tmp_path: Path, pg_url: str, pg_schemas: PgSchemas, caplog: pytest.LogCaptureFixture
) -> None:
    schema = pg_schemas.new("lost")
    store_url = f"{pg_url}?schema={schema}"
    with psycopg.connect(pg_url, autocommit=True) as admin, pytest.raises(StoreLockLost) as lost:
        await serve_until_the_lock_session_is_ended(tmp_path / "a", store_url, admin, schema)
    assert "lost the instance lock" in str(lost.value)
    assert "terminating connection" in str(lost.value)
    assert not (tmp_path / "a" / "gateway.json").exists()
    critical = [r for r in caplog.records if r.levelno == logging.CRITICAL]
    assert len(critical) == 1
    assert "another gateway may take the store over" in critical[0].getMessage()
    async with running_gateway(tmp_path / "b", store_url=store_url) as successor:
        assert successor.gateway.ready
