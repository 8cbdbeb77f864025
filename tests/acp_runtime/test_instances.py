"""Persistent ACP children across gateway instances on one PostgreSQL schema
(docs/instances.md): the instance that starts a persistent child's agent holds it (its claim),
a message to the child reaching another instance is handed to the holder's process, and when
the holder stops, a live instance restarts the child's agent with ``session/load`` at its next
heartbeat, before anyone writes to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.records.instance import ACP_CLAIM
from clawline.testing.live_gateway import running_gateway
from tests.acp_runtime.support import (
    MAIN,
    acp_config,
    alive,
    calls,
    eventually,
    gone,
    pids,
    spawn,
)
from tests.conftest import PgSchemas
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

pytestmark = pytest.mark.postgres

THREADS = {"channels": {"webchat": {"threadBindings": {"spawnAcpSessions": True}}}}


async def test_a_persistent_child_is_served_by_its_holder_and_restarted_when_it_stops(
    tmp_path: Path, pg_url: str, pg_schemas: PgSchemas
) -> None:
    log = tmp_path / "tiny.jsonl"
    store_url = f"{pg_url}?schema={pg_schemas.new('acp_instances')}"
    raw = {**acp_config(log), **THREADS, "gateway": {"instanceLeaseMs": 1000}}
    wire = GatewaySettings(port=0, auth="token", token=TOKEN)

    def settings(name: str) -> Settings:
        return Settings(state_dir=tmp_path / name, raw=raw, store_url=store_url)

    async with running_gateway(tmp_path / "b", settings=settings("b"), gateway_settings=wire) as b:
        async with running_gateway(
            tmp_path / "a", settings=settings("a"), gateway_settings=wire
        ) as a:
            await a.runtime.call(a.runtime.catalog.patch, MAIN, {})
            result = await spawn(a.runtime, task="first", agentId="tiny", thread=True)
            child = result["childSessionKey"]
            await eventually(lambda: a.runtime.store.claims.holder(ACP_CLAIM, child) is not None)
            a_id = a.runtime.instance.instance_id
            assert b.runtime.store.claims.holder(ACP_CLAIM, child) == a_id
            await eventually(lambda: len(calls(log, "session/prompt")) == 1)
            (first_pid,) = pids(log)

            # a follow-up reaching B is served by A's process
            on_b = await WireClient.open(b.url)
            try:
                assert (await on_b.connect(token=TOKEN))["ok"] is True
                await on_b.ok(
                    "chat.send", {"sessionKey": child, "message": "second", "idempotencyKey": "f1"}
                )
                done = await on_b.ok("agent.wait", {"runId": "f1", "timeoutMs": 10_000})
                assert done["status"] == "ok"
            finally:
                await on_b.close()
            assert pids(log) == [first_pid]
            assert [p["text"] for p in calls(log, "session/prompt")] == ["first", "second"]
            assert b.runtime.acp.child(child) is None
        # A stopped cleanly: its agent is gone, its claim left for a live instance
        await gone(first_pid)

        def restarted_on_b() -> bool:
            return (
                b.runtime.store.claims.holder(ACP_CLAIM, child) == (b.runtime.instance.instance_id)
                and b.runtime.acp.child(child) is not None
            )

        await eventually(restarted_on_b, timeout=15)
        live = b.runtime.acp.child(child)
        assert live is not None
        assert live.mode == "persistent"
        second_pid = pids(log)[1]
        assert alive(second_pid)
        (opened,) = calls(log, "session/new")
        (loaded,) = calls(log, "session/load")
        assert loaded["sessionId"] == opened["sessionId"]  # the same ACP session, reloaded

        on_b = await WireClient.open(b.url)
        try:
            assert (await on_b.connect(token=TOKEN))["ok"] is True
            await on_b.ok(
                "chat.send", {"sessionKey": child, "message": "third", "idempotencyKey": "f2"}
            )
            done = await on_b.ok("agent.wait", {"runId": "f2", "timeoutMs": 10_000})
            assert done["status"] == "ok"
            assert pids(log) == [first_pid, second_pid]  # the restarted process answered
            await on_b.ok("sessions.delete", {"key": child})
        finally:
            await on_b.close()
        await gone(second_pid)
        await eventually(lambda: b.runtime.store.claims.holder(ACP_CLAIM, child) is None)
