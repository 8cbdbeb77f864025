"""Events: the iterator, callbacks, ``seq`` tracking, ticks and the bounded queue."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawline.client import ConnectionLost, GatewayClient, GatewayEvent
from clawline.client.event_queue import EventQueue
from clawline.gateway.bus import Audience
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway

from .conftest import Connect, drop_connections


def publish(gw: RunningGateway, count: int, name: str = "chat", start: int = 1) -> list[int]:
    """Publish ``count`` operator events ``{"n": …}``; return their seqs."""
    bus = gw.gateway.bus
    return [bus.publish(name, {"n": start + i}).seq for i in range(count)]


async def take(client: GatewayClient, count: int, timeout: float = 5) -> list[GatewayEvent]:
    taken: list[GatewayEvent] = []

    async def collect() -> None:
        async for event in client.events():
            taken.append(event)
            if len(taken) == count:
                return

    await asyncio.wait_for(collect(), timeout)
    return taken


async def test_events_arrive_in_order_with_their_seq(gw: RunningGateway, connect: Connect) -> None:
    client = await connect()
    assert client.last_seq == gw.gateway.bus.last_seq
    seqs = publish(gw, 3)
    events = await take(client, 3)
    assert [(e.name, e.payload, e.seq) for e in events] == [
        ("chat", {"n": 1}, seqs[0]),
        ("chat", {"n": 2}, seqs[1]),
        ("chat", {"n": 3}, seqs[2]),
    ]
    assert client.last_seq == seqs[-1]


async def test_subscription_events_need_a_subscription(
    gw: RunningGateway, connect: Connect
) -> None:
    client = await connect()
    gw.gateway.bus.publish("sessions.changed", {"sessionKey": "a"}, audience=Audience.SESSIONS)
    publish(gw, 1)
    (event,) = await take(client, 1)
    assert event.name == "chat"


async def test_callbacks_see_every_event_and_can_be_removed(
    gw: RunningGateway, connect: Connect
) -> None:
    client = await connect()
    seen: list[int | None] = []
    remove = client.on_event(lambda event: seen.append(event.seq))

    def broken(event: GatewayEvent) -> None:
        raise RuntimeError("a failing callback must not stop the reader")

    client.on_event(broken)
    seqs = publish(gw, 2)
    await take(client, 2)
    assert seen == seqs
    remove()
    remove()
    publish(gw, 1)
    await take(client, 1)
    assert seen == seqs


async def test_ticks_are_ignored_unless_asked_for(tmp_path: Path) -> None:
    settings = GatewaySettings(port=0, tick_interval_ms=30)
    async with running_gateway(tmp_path / "state", gateway_settings=settings) as gw:
        quiet = await GatewayClient.connect(gw.url)
        ticks = await GatewayClient.connect(gw.url, ignore_ticks=False)
        try:
            got = await take(ticks, 2)
            assert [event.name for event in got] == ["tick", "tick"]
            assert all(isinstance(event.payload, dict) for event in got)
            assert quiet.last_seq >= got[0].seq  # type: ignore[operator]
            assert quiet.next_event_nowait() is None
            publish(gw, 1)
            (event,) = await take(quiet, 1)
            assert event.name == "chat"
        finally:
            await quiet.close()
            await ticks.close()


async def test_a_full_queue_drops_the_oldest_and_counts(
    gw: RunningGateway, connect: Connect
) -> None:
    client = await connect(event_queue_size=3)
    seqs = publish(gw, 5)
    await asyncio.sleep(0.2)
    assert client.last_seq == seqs[-1]
    assert client.dropped_events == 2
    events = await take(client, 3)
    assert [e.seq for e in events] == seqs[2:]


async def test_the_iterator_raises_connection_lost_after_the_queued_events(
    gw: RunningGateway, connect: Connect
) -> None:
    client = await connect()
    publish(gw, 1)
    await asyncio.sleep(0.1)
    drop_connections(gw)
    await asyncio.wait_for(client.wait_disconnected(), 5)
    received: list[GatewayEvent] = []

    async def drain() -> None:
        async for event in client.events():
            received.append(event)

    with pytest.raises(ConnectionLost, match="lost"):
        await drain()
    assert [e.name for e in received] == ["chat"]


async def test_close_ends_the_iterator(gw: RunningGateway, connect: Connect) -> None:
    client = await connect()
    consumer = asyncio.create_task(take(client, 10))
    await asyncio.sleep(0.05)
    await client.close()
    assert await asyncio.wait_for(consumer, 5) == []
    assert await client.wait_disconnected() is None


async def test_queue_unit_behaviour() -> None:
    queue = EventQueue(2)
    for n in range(3):
        queue.put(GatewayEvent("e", n, n))
    assert (len(queue), queue.dropped) == (2, 1)
    queue.end(ConnectionLost("gone"))
    queue.put(GatewayEvent("e", 9, 9))
    assert len(queue) == 3 - 1  # the end marker does not count; one more event was dropped
    first = await queue.get()
    assert first.payload == 2
    with pytest.raises(ConnectionLost):
        await queue.get()
    assert (await queue.get()).payload == 9
    with pytest.raises(ValueError, match="at least one"):
        EventQueue(0)
