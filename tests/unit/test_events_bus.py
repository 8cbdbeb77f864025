"""EventBus: numbering, retention by count and bytes, replay via ``missed``, audiences."""

from __future__ import annotations

import gc
import json
import tracemalloc

import pytest

from clawline.gateway.bus import Audience, Event, EventBus, EventsNotRetained
from clawline.testing import FakeClock
from clawline.types import JSONObject


class Recorder:
    """A subscriber with explicit subscriptions that records what it is handed."""

    def __init__(self, *, sessions: bool = False, keys: tuple[str, ...] = ()) -> None:
        self.sessions = sessions
        self.keys = set(keys)
        self.received: list[Event] = []

    def wants(self, event: Event) -> bool:
        if event.audience is Audience.OPERATORS:
            return True
        if event.audience is Audience.SESSIONS:
            return self.sessions
        return self.sessions or event.session_key in self.keys

    def deliver(self, event: Event) -> None:
        self.received.append(event)


def seqs(events: list[Event]) -> list[int]:
    return [event.seq for event in events]


def test_events_are_numbered_from_one_in_publish_order() -> None:
    bus = EventBus(clock=FakeClock(5_000))
    first = bus.publish("chat", {"n": 1})
    second = bus.publish("agent", {"n": 2}, retain=False)
    third = bus.publish("chat", {"n": 3})
    assert seqs([first, second, third]) == [1, 2, 3]
    assert bus.last_seq == 3
    assert first.ts == 5_000


def test_frame_is_the_wire_event_with_its_seq() -> None:
    bus = EventBus()
    event = bus.publish("sessions.changed", {"sessionKey": "agent:main:main"})
    assert json.loads(event.frame()) == {
        "type": "event",
        "event": "sessions.changed",
        "payload": {"sessionKey": "agent:main:main"},
        "seq": 1,
    }
    assert event.frame() is event.frame()  # encoded once, shared by every subscriber


def test_each_boot_has_its_own_id() -> None:
    assert EventBus().boot_id != EventBus().boot_id


def test_publish_delivers_only_to_attached_subscribers_that_want_it() -> None:
    bus = EventBus()
    plain, subscribed, watcher = Recorder(), Recorder(sessions=True), Recorder(keys=("k1",))
    for subscriber in (plain, subscribed, watcher):
        bus.attach(subscriber)
    bus.publish("chat", {})
    bus.publish("sessions.changed", {}, audience=Audience.SESSIONS, session_key="k1")
    bus.publish("session.message", {}, audience=Audience.SESSION_STREAM, session_key="k1")
    bus.publish("session.message", {}, audience=Audience.SESSION_STREAM, session_key="k2")
    assert seqs(plain.received) == [1]
    assert seqs(subscribed.received) == [1, 2, 3, 4]
    assert seqs(watcher.received) == [1, 3]
    bus.detach(subscribed)
    bus.publish("chat", {})
    assert seqs(subscribed.received) == [1, 2, 3, 4]
    assert seqs(plain.received) == [1, 5]


def test_detaching_an_unknown_subscriber_is_harmless() -> None:
    bus = EventBus()
    bus.detach(Recorder())
    assert bus.publish("chat", {}).seq == 1


def test_taps_see_every_event() -> None:
    bus = EventBus()
    seen: list[int] = []
    bus.tap(lambda event: seen.append(event.seq))
    bus.publish("chat", {})
    bus.publish("tick", {}, retain=False)
    assert seen == [1, 2]


async def test_retention_is_bounded_by_count() -> None:
    bus = EventBus(retained_events=3)
    for n in range(5):
        bus.publish("chat", {"n": n})
    assert bus.oldest_retained_seq == 3
    assert seqs(await bus.missed(Recorder(), 2)) == [3, 4, 5]
    with pytest.raises(EventsNotRetained, match="no longer retained"):
        await bus.missed(Recorder(), 1)


async def test_retention_is_bounded_by_bytes() -> None:
    one = EventBus()
    one.publish("chat", {"blob": "x" * 100})
    size = one.retained_bytes
    assert size > len((await one.missed(Recorder(), 0))[0].frame())  # the entry, not just its text
    bus = EventBus(retained_bytes=size * 2 + size // 2)
    for _ in range(4):
        bus.publish("chat", {"blob": "x" * 100})
    assert bus.oldest_retained_seq == 3
    assert seqs(await bus.missed(Recorder(), 2)) == [3, 4]
    with pytest.raises(EventsNotRetained):
        await bus.missed(Recorder(), 1)


async def test_an_event_larger_than_the_byte_bound_is_not_retained() -> None:
    bus = EventBus(retained_bytes=50)
    bus.publish("chat", {"blob": "x" * 100})
    assert bus.oldest_retained_seq is None
    with pytest.raises(EventsNotRetained):
        await bus.missed(Recorder(), 0)
    assert await bus.missed(Recorder(), 1) == []


async def test_unretained_events_are_numbered_but_not_replayed() -> None:
    bus = EventBus()
    bus.publish("chat", {})
    bus.publish("tick", {}, retain=False)
    bus.publish("chat", {})
    assert seqs(await bus.missed(Recorder(), 0)) == [1, 3]


async def test_missed_after_every_position_around_unretained_events() -> None:
    """Replay must skip by sequence number, not by position: unretained events (ticks,
    shutdown) leave holes in the retained numbering."""
    bus = EventBus()
    retained = []
    for n in range(1, 13):
        if n % 3 == 0:
            bus.publish("tick", {}, retain=False)
        else:
            retained.append(bus.publish("chat", {"n": n}).seq)
    for after in range(13):
        assert seqs(await bus.missed(Recorder(), after)) == [s for s in retained if s > after], (
            after
        )


async def test_missed_after_evictions_with_holes_in_the_numbering() -> None:
    bus = EventBus(retained_events=4)
    for n in range(1, 13):
        bus.publish("tick" if n % 2 else "chat", {"n": n}, retain=n % 2 == 0)
    # retained: 6, 8, 10, 12; evicted: 2, 4
    assert seqs(await bus.missed(Recorder(), 4)) == [6, 8, 10, 12]
    assert seqs(await bus.missed(Recorder(), 5)) == [6, 8, 10, 12]
    assert seqs(await bus.missed(Recorder(), 9)) == [10, 12]
    with pytest.raises(EventsNotRetained):
        await bus.missed(Recorder(), 3)


async def test_missed_filters_by_what_the_subscriber_wants() -> None:
    bus = EventBus()
    bus.publish("chat", {})
    bus.publish("sessions.changed", {}, audience=Audience.SESSIONS, session_key="k1")
    bus.publish("session.message", {}, audience=Audience.SESSION_STREAM, session_key="k1")
    bus.publish("session.message", {}, audience=Audience.SESSION_STREAM, session_key="k2")
    assert seqs(await bus.missed(Recorder(), 0)) == [1]
    assert seqs(await bus.missed(Recorder(keys=("k2",)), 0)) == [1, 4]
    assert seqs(await bus.missed(Recorder(sessions=True), 1)) == [2, 3, 4]


async def test_missed_at_the_head_of_the_stream_is_empty() -> None:
    bus = EventBus()
    assert await bus.missed(Recorder(), 0) == []
    bus.publish("chat", {})
    assert await bus.missed(Recorder(), 1) == []


async def test_missed_with_another_boot_id_is_refused() -> None:
    bus = EventBus()
    bus.publish("chat", {})
    assert seqs(await bus.missed(Recorder(), 0, bus.boot_id)) == [1]
    with pytest.raises(EventsNotRetained, match="boot"):
        await bus.missed(Recorder(), 0, "another-boot")


async def test_missed_ahead_of_the_stream_is_refused() -> None:
    bus = EventBus()
    bus.publish("chat", {})
    with pytest.raises(EventsNotRetained, match="stream is at seq 1"):
        await bus.missed(Recorder(), 2)
    with pytest.raises(EventsNotRetained):
        await bus.missed(Recorder(), -1)


def test_events_not_retained_is_a_not_found_clawline_error() -> None:
    from clawline.errors import ClawlineError, NotFound

    assert issubclass(EventsNotRetained, NotFound)
    assert issubclass(EventsNotRetained, ClawlineError)


def test_a_subscriber_detached_while_publishing_does_not_break_the_fan_out() -> None:
    bus = EventBus()

    class Leaver(Recorder):
        def deliver(self, event: Event) -> None:
            super().deliver(event)
            bus.detach(self)

    leaver, stayer = Leaver(), Recorder()
    bus.attach(leaver)
    bus.attach(stayer)
    bus.publish("chat", {})
    bus.publish("chat", {})
    assert seqs(leaver.received) == [1]
    assert seqs(stayer.received) == [1, 2]


def _fat_session_change(n: int) -> JSONObject:
    """A ``sessions.changed``-like payload whose objects weigh far more than its JSON text."""
    fields: JSONObject = {
        f"field{i}": {"value": i, "label": f"v{n}-{i}", "flags": [True, None, i]} for i in range(40)
    }
    return {"sessionKey": f"agent:main:s{n}", "reason": "patch", "session": fields}


def test_retained_memory_stays_within_the_byte_cap() -> None:
    """The cap bounds what the buffer really holds: the payload objects are not kept."""
    cap = 1024 * 1024
    bus = EventBus(retained_bytes=cap, retained_events=1_000_000)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(3_000):
            key = f"agent:main:s{n}"
            bus.publish(
                "sessions.changed",
                _fat_session_change(n),
                audience=Audience.SESSIONS,
                session_key=key,
            )
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    oldest = bus.oldest_retained_seq
    assert oldest is not None
    assert oldest > 1  # the cap evicted
    assert bus.retained_bytes <= cap
    assert held <= cap + cap // 20 + 64 * 1024, f"{held} bytes held for a {cap}-byte cap"


async def test_a_replayed_event_carries_the_published_payload() -> None:
    bus = EventBus()
    published = bus.publish(
        "session.message",
        {"sessionKey": "k1", "message": {"text": "héllo ✓", "n": [1, 2.5, None]}},
        audience=Audience.SESSION_STREAM,
        session_key="k1",
        drop_if_slow=True,
    )
    (replayed,) = await bus.missed(Recorder(keys=("k1",)), 0)
    assert replayed is not published
    assert replayed.frame() is published.frame()  # the same text, not a second encoding
    assert replayed.payload == published.payload
    assert (replayed.seq, replayed.name, replayed.ts) == (
        published.seq,
        "session.message",
        published.ts,
    )
    assert (replayed.audience, replayed.session_key) == (Audience.SESSION_STREAM, "k1")
    assert replayed.drop_if_slow is True
