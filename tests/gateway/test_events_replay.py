"""``events.replay`` over a real socket: exactly the retained events after a sequence number
that the connection would receive, in order, once each, then live events."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

from clawline.gateway.bus import Audience, Event
from clawline.testing.live_gateway import RunningGateway
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient, connect_params

Wire = Callable[..., Awaitable[WireClient]]


class Recorder:
    """A raw connection that keeps every frame in arrival order (events and responses)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []

    @classmethod
    async def connect(cls, gw: RunningGateway) -> Recorder:
        ws = await websockets.connect(gw.url + "/ws")
        recorder = cls(ws)
        await recorder.until(lambda frame: frame.get("event") == "connect.challenge")
        request = {"type": "req", "id": "hello", "method": "connect"}
        await ws.send(json.dumps({**request, "params": connect_params(token=TOKEN)}))
        hello = await recorder.until(lambda frame: frame.get("id") == "hello")
        assert hello["ok"] is True, hello
        recorder.frames.clear()
        return recorder

    async def until(self, matches: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            frame: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), 5))
            self.frames.append(frame)
            if matches(frame):
                return frame

    async def call(self, request_id: str, method: str, params: Any) -> dict[str, Any]:
        await self.ws.send(
            json.dumps({"type": "req", "id": request_id, "method": method, "params": params})
        )
        return await self.until(lambda frame: frame.get("id") == request_id)

    def event_seqs(self, name: str | None = None) -> list[int]:
        return [
            frame["seq"]
            for frame in self.frames
            if frame.get("type") == "event" and (name is None or frame["event"] == name)
        ]


def publish_mix(gw: RunningGateway, count: int, tag: str) -> list[Event]:
    """Publish ``count`` events: operator events, session-subscriber events, and an
    unretained tick every fifth, as a running gateway does."""
    bus = gw.gateway.bus
    published = []
    for n in range(count):
        if n % 5 == 4:
            published.append(bus.publish("tick", {"n": n}, drop_if_slow=True, retain=False))
        elif n % 3 == 2:
            published.append(
                bus.publish(
                    "sessions.changed",
                    {"sessionKey": f"agent:main:{tag}{n}", "tag": tag},
                    audience=Audience.SESSIONS,
                    session_key=f"agent:main:{tag}{n}",
                    drop_if_slow=True,
                )
            )
        else:
            published.append(bus.publish("chat", {"n": n, "tag": tag}))
    return published


def operator_seqs(events: list[Event], after: int = 0) -> list[int]:
    return [
        event.seq
        for event in events
        if event.audience is Audience.OPERATORS and event.name != "tick" and event.seq > after
    ]


async def test_replay_after_reconnect_returns_exactly_what_was_missed(gw: RunningGateway) -> None:
    first = await Recorder.connect(gw)
    seen = publish_mix(gw, 12, "a")
    await first.until(lambda frame: frame.get("seq") == operator_seqs(seen)[-1])
    last_seen = first.event_seqs()[-1]
    await first.ws.close()

    missed = publish_mix(gw, 23, "b")  # published while no client is connected
    second = await Recorder.connect(gw)
    boot_id = gw.gateway.bus.boot_id
    response = await second.call("r1", "events.replay", {"afterSeq": last_seen, "bootId": boot_id})
    assert response["ok"] is True, response
    expected = operator_seqs(missed, after=last_seen)
    assert response["payload"] == {
        "replayed": len(expected),
        "lastSeq": gw.gateway.bus.last_seq,
        "bootId": boot_id,
    }
    replayed = second.frames[:-1]
    assert [frame["seq"] for frame in replayed] == expected
    assert all(frame["event"] == "chat" for frame in replayed)
    assert [frame["payload"]["tag"] for frame in replayed] == ["b"] * len(expected)

    live = publish_mix(gw, 8, "c")
    await second.until(lambda frame: frame.get("seq") == operator_seqs(live)[-1])
    after_response = second.event_seqs()[len(expected) :]
    # live delivery also carries the unretained ticks
    assert after_response == [e.seq for e in live if e.audience is Audience.OPERATORS]
    everything = second.event_seqs()
    assert everything == sorted(set(everything)), "in order, no duplicates"
    await second.ws.close()


async def test_replay_includes_session_events_only_for_subscribed_connections(
    gw: RunningGateway,
) -> None:
    client = await Recorder.connect(gw)
    connection = next(iter(gw.gateway.connections.values()))
    connection.subscribed_sessions = True  # what sessions.subscribe turns on
    published = publish_mix(gw, 15, "s")
    last = published[-1].seq
    assert published[-1].name == "tick"
    await client.until(lambda frame: frame.get("seq") == last)
    client.frames.clear()
    response = await client.call("r2", "events.replay", {"afterSeq": 0})
    wanted = [event.seq for event in published if event.name != "tick"]
    assert response["payload"]["replayed"] == len(wanted)
    assert client.event_seqs() == wanted
    assert last not in client.event_seqs()  # the tick was not retained
    await client.ws.close()


async def test_replay_at_the_head_replays_nothing(client: WireClient, gw: RunningGateway) -> None:
    gw.gateway.bus.publish("chat", {})
    payload = await client.ok("events.replay", {"afterSeq": gw.gateway.bus.last_seq})
    assert payload["replayed"] == 0


def replay_refusal(frame: dict[str, Any], gw: RunningGateway) -> str:
    assert frame["ok"] is False, frame
    error = frame["error"]
    assert error["code"] == "INVALID_REQUEST"
    bus = gw.gateway.bus
    assert error["details"] == {
        "bootId": bus.boot_id,
        "lastSeq": bus.last_seq,
        "oldestSeq": bus.oldest_retained_seq,
        "errorType": "NotFound",
        "errorClass": "EventsNotRetained",
    }
    return str(error["message"])


async def test_replay_of_another_boot_is_refused(client: WireClient, gw: RunningGateway) -> None:
    gw.gateway.bus.publish("chat", {})
    frame = await client.call("events.replay", {"afterSeq": 0, "bootId": "an-older-boot"})
    assert "events of gateway boot an-older-boot are gone" in replay_refusal(frame, gw)


async def test_replay_ahead_of_the_stream_is_refused(
    client: WireClient, gw: RunningGateway
) -> None:
    frame = await client.call("events.replay", {"afterSeq": gw.gateway.bus.last_seq + 5})
    assert "no events after seq" in replay_refusal(frame, gw)


async def test_replay_of_events_no_longer_retained_is_refused(gw: RunningGateway) -> None:
    bus = gw.gateway.bus
    for n in range(10_010):  # the default retention is 10,000 events
        bus.publish("chat", {"n": n})
    client = await WireClient.open(gw.url)
    try:
        await client.connect(token=TOKEN)
        frame = await client.call("events.replay", {"afterSeq": 5})
        assert "no longer retained" in replay_refusal(frame, gw)
        ok = await client.ok("events.replay", {"afterSeq": bus.last_seq - 3})
        assert ok["replayed"] == 3
    finally:
        await client.close()


async def test_replay_params_are_checked(client: WireClient) -> None:
    for params in ({}, {"afterSeq": -1}, {"afterSeq": 1, "extra": True}, {"afterSeq": "1"}):
        frame = await client.call("events.replay", params)
        assert frame["error"]["code"] == "INVALID_REQUEST", params
        assert frame["error"]["message"].startswith("invalid events.replay params"), params


async def test_live_events_carry_increasing_seqs(client: WireClient, gw: RunningGateway) -> None:
    for n in range(5):
        gw.gateway.bus.publish("chat", {"n": n})
    await client.next_event("chat", after=5)
    seqs = [frame["seq"] for frame in client.events_named("chat")]
    assert seqs == sorted(seqs)
    assert len(seqs) == 5
    hello_version = await client.ok("health")
    assert hello_version["lastSeq"] == seqs[-1]
