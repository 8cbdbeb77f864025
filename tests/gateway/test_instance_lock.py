"""``serve`` holds the store's instance lock (security.md, "One gateway per store"): a second
gateway on a SQLite store is refused before it serves, ``gateway.json`` belongs to the holder;
on PostgreSQL several gateways share the store, and one whose lease another took over stops."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import psycopg
import pytest
from psycopg.rows import TupleRow

from clawline.config import Settings
from clawline.store.instance_lock import StoreInUse, StoreLockLost
from clawline.store.sqlite.instance_lock import lock_path_for
from clawline.testing.live_gateway import running_gateway
from tests.conftest import PgSchemas
from tests.e2e.support import until


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


def shared(state: Path, store_url: str) -> Settings:
    return Settings(state_dir=state, raw={"gateway": {"instanceLeaseMs": 500}}, store_url=store_url)


async def serve_until_taken_over(
    state: Path, store_url: str, admin: psycopg.Connection[TupleRow], taken: list[str]
) -> None:
    """Serve beside another gateway, mark this one taken over from outside, wait for it to
    stop."""
    async with running_gateway(state, settings=shared(state, store_url)) as gateway:
        assert gateway.gateway.ready  # not refused: the store is shared
        taken.append(gateway.gateway.instance.instance_id)
        schema = store_url.rsplit("schema=", 1)[1]
        admin.execute(
            f'UPDATE "{schema}".gateway_instances SET recovered_at = 1,'
            " recovered_by = 'someone' WHERE instance_id = %s",
            (taken[0],),
        )

        async def stopped() -> bool:
            return not gateway.gateway.ready

        await until(stopped, timeout=10, what="the taken-over gateway to stop")


@pytest.mark.postgres
async def test_two_gateways_share_a_postgres_store_and_one_taken_over_stops(
    tmp_path: Path, pg_url: str, pg_schemas: PgSchemas, caplog: pytest.LogCaptureFixture
) -> None:
    store_url = f"{pg_url}?schema={pg_schemas.new('lease')}"
    taken: list[str] = []
    with psycopg.connect(pg_url, autocommit=True) as admin:
        async with running_gateway(
            tmp_path / "b", settings=shared(tmp_path / "b", store_url)
        ) as other:
            with pytest.raises(StoreLockLost) as lost:
                await serve_until_taken_over(tmp_path / "a", store_url, admin, taken)
            assert other.gateway.ready  # the other one goes on
    assert f"instance {taken[0]} was taken over by another instance" in str(lost.value)
    assert "lost the instance lease" in str(lost.value)
    critical = [r for r in caplog.records if r.levelno == logging.CRITICAL]
    assert len(critical) == 1
    assert "another gateway may take its runs over" in critical[0].getMessage()
