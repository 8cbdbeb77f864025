"""Thread bindings through a real gateway: ``sessions.delete`` unbinds the session (and fires
``subagent_ended``), and the gateway's sweeper expires bindings."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.records.collab import ThreadBinding
from clawline.runtime import Runtime
from clawline.testing.channels import FakeChannel, threads_channel
from clawline.testing.clock import FakeClock
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.collab.threads_support import CHILD
from tests.gateway.wire import WireClient

TOKEN = "thread-bindings-token-0123"
HOUR = 3_600_000


def _binding(conversation: str, session_key: str, now: int, idle_ms: int = 0) -> ThreadBinding:
    return ThreadBinding(
        channel="forum",
        account_id="acct",
        conversation_id=conversation,
        session_key=session_key,
        placement="child",
        bound_at=now,
        last_activity_at=now,
        idle_ms=idle_ms,
    )


def _bind(services: Runtime, *bindings: ThreadBinding) -> None:
    with services.store.transaction() as tx:
        for binding in bindings:
            tx.bindings.bind(binding)


@pytest.fixture
async def gw(tmp_path: Path) -> AsyncIterator[RunningGateway]:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    async with running_gateway(tmp_path / "state", gateway_settings=settings) as running:
        yield running


@pytest.fixture
async def client(gw: RunningGateway) -> AsyncIterator[WireClient]:
    opened = await WireClient.open(gw.url)
    frame = await opened.connect(token=TOKEN)
    assert frame["ok"] is True, frame
    yield opened
    await opened.close()


def _forum(gw: RunningGateway) -> FakeChannel:
    forum = threads_channel("forum")
    gw.runtime.channels.register(forum)
    return forum


async def test_delete_unbinds_and_fires_subagent_ended(
    gw: RunningGateway, client: WireClient
) -> None:
    forum = _forum(gw)
    services = gw.runtime
    await client.ok("sessions.create", {"key": CHILD})
    now = services.clock.now_ms()
    other = "agent:main:subagent:00000000-0000-4000-8000-000000000002"
    await services.call(
        _bind, services, _binding("room-1", CHILD, now), _binding("room-2", other, now)
    )
    result = await client.ok("sessions.delete", {"key": CHILD})
    assert result["deleted"] is True
    assert services.store.bindings.for_session(CHILD) == []
    (ended,) = services.store.bindings.for_session(CHILD, active_only=False)
    assert ended.unbind_reason == "session-delete"
    (event,) = forum.ended
    assert event.to_json()["targetSessionKey"] == CHILD
    assert (event.target_kind, event.reason, event.outcome, event.send_farewell) == (
        "subagent",
        "session-delete",
        "deleted",
        True,
    )
    assert [binding.conversation_id for binding in event.bindings] == ["room-1"]
    # Never cascades: another session's binding stays.
    assert len(services.store.bindings.for_session(other)) == 1


async def test_delete_without_lifecycle_hooks_still_unbinds(
    gw: RunningGateway, client: WireClient
) -> None:
    forum = _forum(gw)
    services = gw.runtime
    await client.ok("sessions.create", {"key": CHILD})
    await services.call(_bind, services, _binding("room-1", CHILD, services.clock.now_ms()))
    await client.ok("sessions.delete", {"key": CHILD, "emitLifecycleHooks": False})
    assert services.store.bindings.for_session(CHILD) == []
    assert forum.ended == []


async def test_delete_of_a_missing_session_clears_stale_bindings(
    gw: RunningGateway, client: WireClient
) -> None:
    forum = _forum(gw)
    services = gw.runtime
    await services.call(_bind, services, _binding("room-1", CHILD, services.clock.now_ms()))
    result = await client.ok("sessions.delete", {"key": CHILD})
    assert result["deleted"] is False
    assert services.store.bindings.for_session(CHILD) == []
    assert [event.reason for event in forum.ended] == ["session-delete"]


async def test_gateway_sweeps_expired_bindings(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    clock = FakeClock()
    before = Runtime.open(Settings(state_dir=state), clock=clock)
    try:
        _bind(before, _binding("room-1", CHILD, clock.now_ms(), idle_ms=HOUR))
    finally:
        before.close()
    clock.advance(HOUR)
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    async with running_gateway(state, gateway_settings=settings, clock=clock) as running:
        bindings = running.runtime.store.bindings
        for _ in range(300):
            if not bindings.for_session(CHILD):
                break
            await asyncio.sleep(0.01)
        (ended,) = bindings.for_session(CHILD, active_only=False)
        assert (ended.active, ended.unbind_reason) == (False, "idle-expired")
