"""Aborts reach runs another instance runs (docs/instances.md): two gateways on one
PostgreSQL schema; a run on A and the message queued behind it (sent to B, handed to A) are
both stopped by ``chat.abort`` sent to B, which answers once their ends are written."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import running_gateway
from tests.conftest import PgSchemas
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient

pytestmark = pytest.mark.postgres

SESSION = "agent:main:long-job"


async def test_chat_abort_on_one_instance_stops_the_runs_of_another(
    tmp_path: Path, pg_url: str, pg_schemas: PgSchemas
) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    store_url = f"{pg_url}?schema={pg_schemas.new('abort_across')}"
    async with (
        running_gateway(tmp_path / "a", gateway_settings=settings, store_url=store_url) as a,
        running_gateway(tmp_path / "b", gateway_settings=settings, store_url=store_url) as b,
    ):
        on_a = await WireClient.open(a.url)
        on_b = await WireClient.open(b.url)
        try:
            assert (await on_a.connect(token=TOKEN))["ok"] is True
            assert (await on_b.connect(token=TOKEN))["ok"] is True
            first = await on_a.ok(
                "chat.send",
                {"sessionKey": SESSION, "message": "sleep 60000", "idempotencyKey": "long-1"},
            )
            assert first["status"] == "started"
            # queued behind it: accepted by B, handed to A, where the session's run is
            second = await on_b.ok(
                "chat.send",
                {"sessionKey": SESSION, "message": "sleep 60000", "idempotencyKey": "long-2"},
            )
            assert second["status"] == "started"
            assert a.runtime.runs.has_active_run(SESSION)

            async def handed_to_a() -> None:
                while len(a.runtime.runs.active_runs(SESSION)) < 2:
                    await asyncio.sleep(0.02)

            await asyncio.wait_for(handed_to_a(), 10)

            aborted = await asyncio.wait_for(on_b.ok("chat.abort", {"sessionKey": SESSION}), 15)
            assert aborted["aborted"] is True
            assert sorted(aborted["runIds"]) == ["long-1", "long-2"]
            # answered once their ends were written: nothing runs on A any more
            assert a.runtime.runs.active_runs(SESSION) == []
            for run_id in ("long-1", "long-2"):
                waited = await on_b.ok("agent.wait", {"runId": run_id, "timeoutMs": 5_000})
                assert waited["status"] != "timeout", waited
                assert waited["status"] != "ok", waited

            # an abort of one run by id stops only that one
            third = await on_a.ok(
                "chat.send",
                {"sessionKey": SESSION, "message": "sleep 60000", "idempotencyKey": "long-3"},
            )
            assert third["status"] == "started"
            none = await on_b.ok("chat.abort", {"sessionKey": SESSION, "runId": "other"})
            assert none == {"ok": True, "aborted": False, "runIds": []}
            assert a.runtime.runs.has_active_run(SESSION)
            one = await on_b.ok("chat.abort", {"sessionKey": SESSION, "runId": "long-3"})
            assert one["runIds"] == ["long-3"]
            assert not a.runtime.runs.has_active_run(SESSION)
        finally:
            await on_a.close()
            await on_b.close()
