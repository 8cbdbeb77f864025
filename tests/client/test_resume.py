"""Resuming after a dropped connection: exactly the missed events, then the live ones."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawline.client import ConnectError, ConnectionLost, GatewayClient, GatewayEvent
from clawline.gateway.bus import DEFAULT_RETAINED_EVENTS, Audience
from clawline.gateway.methods import builtin_methods, system
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
from clawline.testing.live_gateway import RunningGateway
from clawline.types import JSON

from .conftest import Connect, drop_connections, serving
from .test_events import publish, take


async def dropped(gw: RunningGateway, client: GatewayClient) -> None:
    assert drop_connections(gw) == 1
    await asyncio.wait_for(client.wait_disconnected(), 5)


async def test_resume_delivers_exactly_the_missed_events_then_live_ones(
    gw: RunningGateway, connect: Connect
) -> None:
    client = await connect()
    publish(gw, 1, start=0)
    (seen,) = await take(client, 1)
    await dropped(gw, client)
    with pytest.raises(ConnectionLost):
        await take(client, 1)
    missed = publish(gw, 3)
    resumed = await client.resume()
    assert (resumed.complete, resumed.missed, resumed.reason) == (True, 3, None)
    assert resumed.boot_id == gw.gateway.bus.boot_id
    assert client.connected
    live = publish(gw, 1, start=4)
    events = await take(client, 4)
    assert [(e.seq, e.payload, e.replayed) for e in events] == [
        (missed[0], {"n": 1}, True),
        (missed[1], {"n": 2}, True),
        (missed[2], {"n": 3}, True),
        (live[0], {"n": 4}, False),
    ]
    assert seen.seq is not None
    assert seen.seq < missed[0]
    assert client.last_seq == live[0]
    assert client.next_event_nowait() is None


async def test_resume_restores_the_sessions_subscription_and_replays_its_events(
    gw: RunningGateway, connect: Connect
) -> None:
    client = await connect()
    await client.request("sessions.subscribe", {})
    assert client.subscribed
    await dropped(gw, client)
    bus = gw.gateway.bus
    changed = bus.publish("sessions.changed", {"sessionKey": "a"}, audience=Audience.SESSIONS)
    chat = bus.publish("chat", {"n": 1})
    resumed = await client.resume()
    assert (resumed.complete, resumed.missed) == (True, 2)
    (connection,) = gw.gateway.connections.values()
    assert connection.subscribed_sessions
    later = bus.publish("sessions.changed", {"sessionKey": "b"}, audience=Audience.SESSIONS)
    events = await take(client, 3)
    assert [(e.name, e.seq) for e in events] == [
        ("sessions.changed", changed.seq),
        ("chat", chat.seq),
        ("sessions.changed", later.seq),
    ]
    await client.request("sessions.unsubscribe", {})
    assert not client.subscribed


async def test_resume_restores_message_streams_and_replays_them(
    gw: RunningGateway, connect: Connect
) -> None:
    client = await connect()
    await client.request("sessions.messages.subscribe", {"key": "main"})
    assert client.message_keys == {"main"}
    await dropped(gw, client)
    bus = gw.gateway.bus
    mine = bus.publish(
        "session.message",
        {"sessionKey": "agent:main:main"},
        audience=Audience.SESSION_STREAM,
        session_key="agent:main:main",
    )
    bus.publish(
        "session.message",
        {"sessionKey": "agent:main:other"},
        audience=Audience.SESSION_STREAM,
        session_key="agent:main:other",
    )
    resumed = await client.resume()
    assert (resumed.complete, resumed.missed) == (True, 1)
    (event,) = await take(client, 1)
    assert (event.name, event.seq, event.replayed) == ("session.message", mine.seq, True)
    (connection,) = gw.gateway.connections.values()
    assert connection.message_keys == {"agent:main:main"}
    await client.request("sessions.messages.unsubscribe", {"key": "main"})
    assert client.message_keys == set()


async def test_events_no_longer_retained_ask_the_caller_to_list_again(
    gw: RunningGateway, connect: Connect
) -> None:
    client = await connect()
    await client.request("sessions.subscribe", {})
    await dropped(gw, client)
    publish(gw, DEFAULT_RETAINED_EVENTS + 1)
    resumed = await client.resume()
    assert not resumed.complete
    assert resumed.missed == 0
    assert resumed.reason is not None
    assert "no longer retained" in resumed.reason
    assert client.next_event_nowait() is None  # nothing half-replayed
    assert client.last_seq == gw.gateway.bus.last_seq
    (connection,) = gw.gateway.connections.values()
    assert connection.subscribed_sessions  # the subscription is back, from now on
    later = gw.gateway.bus.publish(
        "sessions.changed", {"sessionKey": "x"}, audience=Audience.SESSIONS
    )
    (event,) = await take(client, 1)
    assert (event.seq, event.replayed) == (later.seq, False)


async def test_a_restarted_gateway_is_reported_as_not_retained(tmp_path: Path) -> None:
    methods = builtin_methods()
    async with serving(tmp_path / "one", methods) as url:
        client = await GatewayClient.connect(url)
        first_boot = client.boot_id
        port = int(url.rsplit(":", 1)[1])
    await asyncio.wait_for(client.wait_disconnected(), 5)
    try:
        with pytest.raises(ConnectError):
            await client.resume()  # nothing listens: try again later
        async with serving(tmp_path / "two", builtin_methods(), port=port):
            resumed = await client.resume()
            assert not resumed.complete
            assert resumed.boot_id != first_boot
            assert (
                resumed.reason == f"the gateway restarted (boot {first_boot} -> {client.boot_id})"
            )
            assert await client.request("health") is not None
    finally:
        await client.close()
    with pytest.raises(ConnectionLost, match="closed"):
        await client.resume()


racy_methods = MethodRegistry()


@racy_methods.method(
    "events.replay",
    scope=READ,
    schema={"afterSeq": P.integer(required=True, min=0), "bootId": P.string(max_len=64)},
)
async def replay_after_a_live_event(call: Call) -> JSON:
    """A live event reaches the connection before the replay (and is replayed again)."""
    call.gateway.bus.publish("chat", {"live": True})
    return await system.events_replay(call)


@racy_methods.method("test.publish", scope=None, schema={"count": P.integer(required=True)})
async def publish_some(call: Call) -> JSON:
    seqs = [call.gateway.bus.publish("chat", {"n": n}).seq for n in range(call.params["count"])]
    return {"seqs": seqs}


async def test_live_events_during_the_replay_come_once_and_in_order(tmp_path: Path) -> None:
    async with serving(tmp_path / "state", racy_methods) as url:
        client = await GatewayClient.connect(url)
        publisher = await GatewayClient.connect(url)
        try:
            await client._drop_connection()  # as if the network had failed
            answer = await publisher.request("test.publish", {"count": 2})
            assert isinstance(answer, dict)
            missed = answer["seqs"]
            resumed = await client.resume()
            assert (resumed.complete, resumed.missed) == (True, 2)
            events: list[GatewayEvent] = await take(client, 3)
            assert [e.seq for e in events] == [*missed, missed[-1] + 1]
            assert [e.payload for e in events] == [{"n": 0}, {"n": 1}, {"live": True}]
            assert [e.replayed for e in events] == [True, True, False]
            await asyncio.sleep(0.1)
            assert client.next_event_nowait() is None  # the duplicate was dropped
        finally:
            await client.close()
            await publisher.close()
