"""Session events over real sockets: ``sessions.changed`` for subscribed connections only,
``session.message`` per session, and replay after a reconnect (``afterSeq``/``bootId``)."""

from __future__ import annotations

import asyncio
from typing import Any

from clawline.gateway.bus import Audience
from clawline.testing.live_gateway import RunningGateway
from tests.gateway.test_sessions_support import Opener, connected, error_of, quiet
from tests.gateway.wire import WireClient


async def changes(client: WireClient, count: int, *, timeout: float = 5.0) -> list[dict[str, Any]]:
    """Wait until ``count`` ``sessions.changed`` events have arrived; return them all."""

    async def wait() -> list[dict[str, Any]]:
        while len(client.events_named("sessions.changed")) < count:
            await client.next_event("sessions.changed", after=len(client.events))
        return client.events_named("sessions.changed")

    return await asyncio.wait_for(wait(), timeout)


async def test_subscribe_answers_the_stream_position(
    client: WireClient, gw: RunningGateway
) -> None:
    payload = await client.ok("sessions.subscribe", {})
    bus = gw.gateway.bus
    assert payload == {"subscribed": True, "lastSeq": bus.last_seq, "bootId": bus.boot_id}
    assert await client.ok("sessions.unsubscribe", {}) == {"subscribed": False}
    again = await client.ok("sessions.subscribe")
    assert again["subscribed"] is True
    error = await error_of(client, "sessions.unsubscribe", {"all": True})
    assert error["message"] == "invalid sessions.unsubscribe params: unknown key 'all'"


async def test_changes_reach_subscribed_connections_only(wire: Opener, client: WireClient) -> None:
    watcher = await connected(wire, scopes=["operator.read"])
    bystander = await connected(wire)
    await watcher.ok("sessions.subscribe", {})
    created = await client.ok("sessions.create", {"label": "first"})
    key = created["key"]
    await client.ok("sessions.patch", {"key": key, "label": "second", "thinkingLevel": "low"})
    await client.ok("sessions.patch", {"key": key, "label": "second"})
    await client.ok("sessions.reset", {"key": key})
    await client.ok("sessions.reset", {"key": key, "reason": "new"})
    await client.ok("sessions.delete", {"key": key})
    events = await changes(watcher, 6)
    assert [event["payload"]["reason"] for event in events] == [
        "create",
        "patch",
        "patch",
        "reset",
        "new",
        "delete",
    ]
    seqs = [event["seq"] for event in events]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == 6
    for event in events[:5]:
        payload = event["payload"]
        row = payload["session"]
        assert payload["sessionKey"] == row["key"] == key
        assert isinstance(payload["ts"], int)
        for field in ("label", "sessionId", "updatedAt", "hasActiveRun", "childSessions", "kind"):
            assert payload[field] == row[field], field
        assert row["hasActiveRun"] is False
    assert events[0]["payload"]["label"] == "first"
    assert events[1]["payload"]["thinkingLevel"] == "low"
    assert events[3]["payload"]["sessionId"] != events[2]["payload"]["sessionId"]
    deleted = events[5]["payload"]
    assert deleted["sessionKey"] == key
    assert deleted["reason"] == "delete"
    assert "session" not in deleted
    assert isinstance(deleted["ts"], int)
    assert await quiet(bystander, "sessions.changed") == []
    assert client.events_named("sessions.changed") == []
    assert len(await quiet(watcher, "sessions.changed")) == 6


async def test_unsubscribe_stops_delivery(client: WireClient) -> None:
    await client.ok("sessions.subscribe", {})
    await client.ok("sessions.patch", {"key": "agent:main:a", "label": "one"})
    await changes(client, 1)
    await client.ok("sessions.unsubscribe", {})
    await client.ok("sessions.patch", {"key": "agent:main:a", "label": "two"})
    assert len(await quiet(client, "sessions.changed")) == 1


async def test_message_stream_of_one_session(wire: Opener, client: WireClient) -> None:
    for key in ("agent:main:talk", "agent:main:other"):
        await client.ok("sessions.patch", {"key": key})
    watcher = await connected(wire, scopes=["operator.read"])
    answer = await watcher.ok("sessions.messages.subscribe", {"key": "Agent:Main:Talk"})
    assert answer["subscribed"] is True
    assert answer["key"] == "agent:main:talk"
    await client.ok("chat.inject", {"sessionKey": "agent:main:other", "message": "not for you"})
    await client.ok("chat.inject", {"sessionKey": "agent:main:talk", "message": "hello"})
    message = await watcher.next_event("session.message")
    payload = message["payload"]
    assert payload["sessionKey"] == "agent:main:talk"
    assert payload["message"]["content"][0]["text"] == "hello"
    assert payload["session"]["key"] == "agent:main:talk"
    assert payload["messageSeq"] == payload["message"]["seq"] == 1
    assert len(await quiet(watcher, "session.message")) == 1
    assert watcher.events_named("sessions.changed") == []
    gone = await watcher.ok("sessions.messages.unsubscribe", {"key": "agent:main:talk"})
    assert gone == {"subscribed": False, "key": "agent:main:talk"}
    await client.ok("chat.inject", {"sessionKey": "agent:main:talk", "message": "again"})
    assert len(await quiet(watcher, "session.message")) == 1
    missing = await error_of(watcher, "sessions.messages.subscribe", {})
    assert missing["message"] == "invalid sessions.messages.subscribe params: key is required"


async def test_sessions_subscribe_includes_every_session_message(
    wire: Opener, client: WireClient
) -> None:
    await client.ok("sessions.patch", {"key": "agent:main:talk"})
    watcher = await connected(wire, scopes=["operator.read"])
    await watcher.ok("sessions.subscribe", {})
    await client.ok("chat.inject", {"sessionKey": "agent:main:talk", "message": "hello"})
    message = await watcher.next_event("session.message")
    assert message["payload"]["sessionKey"] == "agent:main:talk"
    changed = await watcher.next_event("sessions.changed")
    assert changed["payload"]["phase"] == "message"
    assert changed["payload"]["messageSeq"] == 1


async def test_resubscribe_after_reconnect_replays_exactly_the_missed_changes(
    wire: Opener, client: WireClient
) -> None:
    first = await connected(wire)
    position = await first.ok("sessions.subscribe", {})
    boot_id = position["bootId"]
    await client.ok("sessions.patch", {"key": "agent:main:a", "label": "seen"})
    seen = (await changes(first, 1))[0]
    await first.close()

    await client.ok("sessions.patch", {"key": "agent:main:b", "label": "missed-1"})
    await client.ok("sessions.patch", {"key": "agent:main:a", "label": "missed-2"})
    await client.ok("sessions.delete", {"key": "agent:main:b"})
    await client.ok("sessions.unsubscribe", {})  # events of unsubscribing clients: none

    second = await connected(wire)
    resumed = await second.ok("sessions.subscribe", {"afterSeq": seen["seq"], "bootId": boot_id})
    assert resumed["replayed"] == 3
    assert resumed["bootId"] == boot_id
    replayed = await changes(second, 3)
    assert [(e["payload"]["sessionKey"], e["payload"]["reason"]) for e in replayed] == [
        ("agent:main:b", "patch"),
        ("agent:main:a", "patch"),
        ("agent:main:b", "delete"),
    ]
    assert replayed[0]["payload"]["label"] == "missed-1"
    assert replayed[1]["payload"]["label"] == "missed-2"
    assert resumed["lastSeq"] == replayed[-1]["seq"]
    await client.ok("sessions.patch", {"key": "agent:main:a", "label": "live"})
    events = await changes(second, 4)
    assert events[3]["payload"]["label"] == "live"
    seqs = [event["seq"] for event in await quiet(second, "sessions.changed")]
    assert seqs == sorted(set(seqs))
    assert len(seqs) == 4
    assert seqs[0] == seen["seq"] + 1


async def test_replay_refuses_a_foreign_boot_or_a_position_out_of_range(
    wire: Opener, client: WireClient, gw: RunningGateway
) -> None:
    bus = gw.gateway.bus
    await client.ok("sessions.patch", {"key": "agent:main:a"})
    watcher = await connected(wire)
    foreign = await error_of(
        watcher, "sessions.subscribe", {"afterSeq": 0, "bootId": "another-boot"}
    )
    assert foreign["code"] == "INVALID_REQUEST"
    assert foreign["message"].startswith("events of gateway boot another-boot are gone")
    assert foreign["details"] == {
        "bootId": bus.boot_id,
        "lastSeq": bus.last_seq,
        "oldestSeq": bus.oldest_retained_seq,
        "errorType": "NotFound",
        "errorClass": "EventsNotRetained",
    }
    ahead = await error_of(watcher, "sessions.subscribe", {"afterSeq": bus.last_seq + 5})
    assert ahead["message"] == (
        f"no events after seq {bus.last_seq + 5}: the stream is at seq {bus.last_seq}"
    )
    for _ in range(10_001):  # more than the bus retains
        bus.publish("test.noise", {}, audience=Audience.SESSIONS, session_key="x")
    stale = await error_of(watcher, "sessions.subscribe", {"afterSeq": 1})
    assert stale["message"].startswith("events after seq 1 are no longer retained")
    oldest = bus.oldest_retained_seq
    assert oldest is not None
    assert oldest > 2
    assert stale["details"]["oldestSeq"] == oldest
    key_stale = await error_of(
        watcher, "sessions.messages.subscribe", {"key": "agent:main:a", "afterSeq": 1}
    )
    assert key_stale["message"].startswith("events after seq 1 are no longer retained")
    # A refused subscribe leaves the connection unsubscribed.
    await client.ok("sessions.patch", {"key": "agent:main:a", "label": "after"})
    await client.ok("chat.inject", {"sessionKey": "agent:main:a", "message": "hi"})
    assert await quiet(watcher, "sessions.changed") == []
    assert watcher.events_named("session.message") == []


async def test_message_subscribe_replays_that_sessions_messages(
    wire: Opener, client: WireClient
) -> None:
    for key in ("agent:main:talk", "agent:main:other"):
        await client.ok("sessions.patch", {"key": key})
    start = (await client.ok("health"))["lastSeq"]
    await client.ok("chat.inject", {"sessionKey": "agent:main:talk", "message": "one"})
    await client.ok("chat.inject", {"sessionKey": "agent:main:other", "message": "elsewhere"})
    await client.ok("chat.inject", {"sessionKey": "agent:main:talk", "message": "two"})
    watcher = await connected(wire, scopes=["operator.read"])
    answer = await watcher.ok(
        "sessions.messages.subscribe", {"key": "agent:main:talk", "afterSeq": start}
    )
    assert answer["replayed"] >= 2
    await quiet(watcher, "session.message")
    texts = [
        event["payload"]["message"]["content"][0]["text"]
        for event in watcher.events_named("session.message")
    ]
    assert texts == ["one", "two"]
    assert watcher.events_named("sessions.changed") == []
