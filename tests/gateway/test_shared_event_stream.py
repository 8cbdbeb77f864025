"""The gateway event stream shared by several instances on one PostgreSQL schema: every event
any instance publishes is delivered on every instance in one global order, with one global
``seq`` and the same frame; a client resumes on any instance with exactly what it missed, from
the instance's window or from the store's event log, up to the log's retention.

Each "instance" here is an :class:`EventBus` over a store object of its own (its own pool and
workers) on one schema, as two gateway processes would have; the last test runs two real
gateways over one schema.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import websockets
from websockets.asyncio.client import ClientConnection

from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.gateway.bus import (
    DEFAULT_RETAINED_EVENTS,
    Audience,
    Event,
    EventBus,
    EventsNotRetained,
)
from clawline.gateway.options import GatewaySettings
from clawline.store.event_log import EventLog, EventRecord, LogBounds, LoggedEvent
from clawline.store.postgres.store import PostgresStore
from clawline.store.workers import StoreWorkers
from clawline.testing import FakeClock, eventually
from clawline.testing.live_gateway import running_gateway
from tests.conftest import PgSchemas
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import connect_params

pytestmark = pytest.mark.postgres


class Recorder:
    """A subscriber with explicit subscriptions that records what it is handed."""

    def __init__(self, *, sessions: bool = False) -> None:
        self.sessions = sessions
        self.received: list[Event] = []

    def wants(self, event: Event) -> bool:
        if event.audience is Audience.OPERATORS:
            return True
        return self.sessions

    def deliver(self, event: Event) -> None:
        self.received.append(event)

    def seqs(self) -> list[int]:
        return [event.seq for event in self.received]

    def frames(self) -> list[str]:
        return [event.frame() for event in self.received]


@dataclass
class Instance:
    """One gateway instance's bus, on a store object of its own."""

    name: str
    bus: EventBus
    store: PostgresStore
    log: EventLog
    task: asyncio.Task[None] | None = None
    recorder: Recorder = field(default_factory=lambda: Recorder(sessions=True))

    def start(self) -> None:
        self.task = asyncio.create_task(self.bus.run())

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
            self.task = None


@contextlib.asynccontextmanager
async def instance(
    url: str,
    schema: str,
    name: str,
    *,
    clock: Clock = SYSTEM_CLOCK,
    retained_events: int = DEFAULT_RETAINED_EVENTS,
    poll_interval_s: float = 1.0,
    run: bool = True,
    rings_lost: bool = False,
) -> AsyncIterator[Instance]:
    store = PostgresStore(url, schema=schema)
    workers = StoreWorkers(store)
    try:
        log = store.event_log()
        assert log is not None
        if rings_lost:
            log = RingsLost(log)
        bus = EventBus(
            clock=clock,
            retained_events=retained_events,
            event_log=log,
            instance_id=name,
            workers=workers,
            poll_interval_s=poll_interval_s,
        )
        await bus.open()
        node = Instance(name, bus, store, log)
        bus.attach(node.recorder)
        if run:
            node.start()
        try:
            yield node
        finally:
            await node.stop()
    finally:
        workers.close()
        store.close()


@pytest.fixture
def schema(pg_schemas: PgSchemas) -> str:
    return pg_schemas.new("stream")


def publish_mix(bus: EventBus, count: int, tag: str) -> list[dict[str, Any]]:
    """Publish ``count`` retained events of every audience; their payloads."""
    payloads: list[dict[str, Any]] = []
    for n in range(count):
        payload: dict[str, Any] = {"tag": tag, "n": n, "text": "héllo ✓", "list": [1, 2.5, None]}
        payloads.append(payload)
        if n % 3 == 0:
            bus.publish("chat", payload)
        elif n % 3 == 1:
            key = f"agent:main:{tag}{n}"
            bus.publish(
                "sessions.changed",
                payload,
                audience=Audience.SESSIONS,
                session_key=key,
                drop_if_slow=True,
            )
        else:
            bus.publish(
                "session.message",
                payload,
                audience=Audience.SESSION_STREAM,
                session_key=f"agent:main:{tag}",
            )
    return payloads


async def delivered(node: Instance, count: int) -> None:
    await eventually(
        lambda: len(node.recorder.received) >= count,
        what=f"{count} events delivered on {node.name}",
    )


async def test_an_event_published_on_one_instance_is_delivered_on_every_instance_alike(
    pg_url: str, schema: str
) -> None:
    async with (
        instance(pg_url, schema, "a") as a,
        instance(pg_url, schema, "b") as b,
    ):
        payloads = publish_mix(a.bus, 9, "x")
        await delivered(a, 9)
        await delivered(b, 9)
        assert a.recorder.seqs() == b.recorder.seqs() == list(range(1, 10))
        assert a.recorder.frames() == b.recorder.frames()  # the very same text
        for event, payload, seq in zip(b.recorder.received, payloads, range(1, 10), strict=True):
            frame = json.loads(event.frame())
            assert frame == {"type": "event", "event": event.name, "payload": payload, "seq": seq}
            assert event.payload == payload
        sessions_changed = b.recorder.received[1]
        assert (sessions_changed.name, sessions_changed.audience) == (
            "sessions.changed",
            Audience.SESSIONS,
        )
        assert (sessions_changed.session_key, sessions_changed.drop_if_slow) == (
            "agent:main:x1",
            True,
        )
        assert a.bus.last_seq == b.bus.last_seq == 9
        publish_mix(b.bus, 3, "y")  # and the other way round
        await delivered(a, 12)
        assert [e.payload["tag"] for e in a.recorder.received[9:]] == ["y"] * 3
        assert a.recorder.seqs()[9:] == [10, 11, 12]


async def test_every_instance_reports_the_stream_id_and_position(pg_url: str, schema: str) -> None:
    async with instance(pg_url, schema, "a") as a:
        stream_id = a.log.stream_id()
        assert a.bus.boot_id == stream_id
        publish_mix(a.bus, 4, "x")
        await delivered(a, 4)
        workers = StoreWorkers(a.store)
        unopened = EventBus(event_log=a.log, instance_id="c", workers=workers)
        assert unopened.boot_id != stream_id  # a process's own until it opens the stream
        workers.close()
        async with instance(pg_url, schema, "b") as b:
            assert b.bus.boot_id == stream_id
            assert b.bus.last_seq == 4  # where the stream is, not where this process began
            assert b.recorder.received == []  # what came before is for replays only
            assert b.bus.oldest_retained_seq == 1
            with pytest.raises(EventsNotRetained, match="events of gateway boot other"):
                await b.bus.missed(Recorder(), 0, "other")


async def test_events_are_delivered_once_read_back_and_caught_up_waits_for_that(
    pg_url: str, schema: str
) -> None:
    # A poll far beyond the test: only the writer's own nudge and the doorbell read.
    async with instance(pg_url, schema, "a", poll_interval_s=3600) as a:
        event = a.bus.publish("chat", {"n": 1})
        assert event.seq == 0  # not numbered until the log numbers it
        assert a.recorder.received == []  # nothing goes out before the log has it
        await a.bus.caught_up()
        assert a.recorder.seqs() == [1]
        for n in range(50):
            a.bus.publish("chat", {"n": n})
        await a.bus.caught_up()
        assert a.recorder.seqs() == list(range(1, 52))
        await a.bus.caught_up()  # nothing pending: at once


async def test_unretained_events_stay_on_their_instance_and_carry_no_seq(
    pg_url: str, schema: str
) -> None:
    async with (
        instance(pg_url, schema, "a") as a,
        instance(pg_url, schema, "b") as b,
    ):
        a.bus.publish("chat", {"n": 1})
        await a.bus.caught_up()
        await delivered(b, 1)
        a.bus.publish("tick", {"ts": 1}, drop_if_slow=True, retain=False)
        (tick,) = a.recorder.received[1:]  # at once, without the log
        assert json.loads(tick.frame()) == {"type": "event", "event": "tick", "payload": {"ts": 1}}
        a.bus.publish("chat", {"n": 2})
        await delivered(b, 2)
        await a.bus.caught_up()
        assert [e.name for e in b.recorder.received] == ["chat", "chat"]
        assert b.recorder.seqs() == [1, 2]  # the tick took no number from the stream
        assert [json.loads(frame).get("seq") for frame in a.recorder.frames()] == [1, None, 2]
        assert await b.bus.missed(Recorder(), 0) == b.recorder.received


async def test_a_client_resumes_on_another_instance_with_exactly_what_it_missed(
    pg_url: str, schema: str
) -> None:
    async with (
        instance(pg_url, schema, "a") as a,
        instance(pg_url, schema, "b") as b,
    ):
        publish_mix(a.bus, 6, "seen")
        await delivered(a, 6)
        last_seen, boot_id = a.recorder.seqs()[-1], a.bus.boot_id  # the client leaves A here
        publish_mix(a.bus, 7, "missed")
        publish_mix(b.bus, 5, "missed-on-b")
        await delivered(a, 18)
        await delivered(b, 18)
        everything = Recorder(sessions=True)
        replayed = await b.bus.missed(everything, last_seen, boot_id)
        assert [e.seq for e in replayed] == list(range(last_seen + 1, 19))
        assert [e.frame() for e in replayed] == a.recorder.frames()[last_seen:]
        operator_only = await b.bus.missed(Recorder(), last_seen, boot_id)
        assert [e.seq for e in operator_only] == [
            e.seq for e in replayed if e.audience is Audience.OPERATORS
        ]


async def test_a_resume_older_than_the_window_is_read_from_the_log(
    pg_url: str, schema: str
) -> None:
    async with (
        instance(pg_url, schema, "a") as a,
        instance(pg_url, schema, "b", retained_events=4) as b,
    ):
        publish_mix(a.bus, 20, "x")
        await delivered(a, 20)
        await delivered(b, 20)
        assert b.bus.oldest_retained_seq == 1  # the log's, not the window's (17)
        frames = a.recorder.frames()
        for after in range(21):  # on both sides of the window's start, and inside it
            everything = await b.bus.missed(Recorder(sessions=True), after, b.bus.boot_id)
            assert [e.seq for e in everything] == list(range(after + 1, 21)), after
            assert [e.frame() for e in everything] == frames[after:], after
            operators = await b.bus.missed(Recorder(), after)
            assert [e.seq for e in operators] == [
                e.seq for e in everything if e.audience is Audience.OPERATORS
            ], after
        # A replay read from the log goes on seamlessly with what arrives later.
        probe = Recorder(sessions=True)
        replay = await b.bus.replay_from(3)
        b.bus.attach(probe)
        probe.received.extend(replay.select(probe))
        publish_mix(a.bus, 5, "later")
        await delivered(b, 25)
        await eventually(lambda: len(probe.received) == 22, what="the live events after it")
        assert probe.seqs() == list(range(4, 26))


async def test_a_resume_from_a_seq_this_instance_has_not_read_yet_waits_for_it(
    pg_url: str, schema: str
) -> None:
    async with (
        instance(pg_url, schema, "a") as a,
        instance(pg_url, schema, "b", run=False) as b,  # b's reader is not running (yet)
    ):
        publish_mix(a.bus, 5, "x")
        await delivered(a, 5)
        assert b.bus.last_seq == 0
        with pytest.raises(
            EventsNotRetained, match="no events after seq 9: the stream is at seq 5"
        ):
            await b.bus.missed(Recorder(), 9)
        waiting = asyncio.create_task(b.bus.missed(Recorder(sessions=True), 4, a.bus.boot_id))
        b.start()  # the client saw seq 4 on a; b reads it a moment later
        replayed = await waiting
        assert [e.seq for e in replayed] == [5]
        assert [e.frame() for e in replayed] == a.recorder.frames()[4:]


async def test_a_prune_past_the_position_refuses_the_replay(pg_url: str, schema: str) -> None:
    clock = FakeClock(1_000_000)
    async with (
        instance(pg_url, schema, "a", clock=clock) as a,
        instance(pg_url, schema, "b", retained_events=2) as b,
    ):
        publish_mix(a.bus, 5, "old")
        await a.bus.caught_up()
        clock.advance(60_000)
        publish_mix(a.bus, 5, "new")
        await delivered(b, 10)
        assert [e.seq for e in await b.bus.missed(Recorder(sessions=True), 2)] == list(range(3, 11))
        assert await a.bus.prune(retention_ms=30_000, keep_at_least=1) == 5
        assert a.log.bounds() == (6, 10)
        for after in (0, 2, 4):
            with pytest.raises(EventsNotRetained, match=r"no longer retained \(oldest kept: 6\)"):
                await b.bus.missed(Recorder(), after)
        assert [e.seq for e in await b.bus.missed(Recorder(sessions=True), 5)] == list(range(6, 11))
        # However old, the newest keep_at_least stay; the very newest always does.
        clock.advance(3_600_000)
        assert await a.bus.prune(retention_ms=1, keep_at_least=3) == 2
        assert a.log.bounds() == (8, 10)
        assert await a.bus.prune(retention_ms=1, keep_at_least=0) == 2
        assert a.log.bounds() == (10, 10)
        a.bus.publish("chat", {"after": "prune"})
        await delivered(b, 11)
        assert b.recorder.seqs()[-1] == 11  # the numbering goes on, it does not start over


async def test_concurrent_publishers_on_two_instances_form_one_gapless_sequence(
    pg_url: str, schema: str
) -> None:
    per_instance = 300
    async with (
        instance(pg_url, schema, "a") as a,
        instance(pg_url, schema, "b") as b,
    ):

        async def publish(node: Instance, tag: str) -> None:
            for n in range(per_instance):
                node.bus.publish("chat", {"tag": tag, "n": n})
                if n % 7 == 0:
                    await asyncio.sleep(0)  # let the writers run while more is published
                if n % 50 == 49:
                    await node.bus.caught_up()

        await asyncio.gather(publish(a, "a"), publish(b, "b"))
        total = 2 * per_instance
        await delivered(a, total)
        await delivered(b, total)
        assert a.recorder.seqs() == b.recorder.seqs() == list(range(1, total + 1))
        assert a.recorder.frames() == b.recorder.frames()
        tags = [event.payload["tag"] for event in a.recorder.received]
        for tag in ("a", "b"):  # each publisher's own order is kept
            ns = [e.payload["n"] for e in a.recorder.received if e.payload["tag"] == tag]
            assert ns == list(range(per_instance))
        switches = sum(1 for one, other in itertools.pairwise(tags) if one != other)
        assert switches > 1, "the two publishers' batches did not interleave"


def test_appends_commit_in_seq_order_so_a_reader_never_sees_a_hole(
    pg_url: str, schema: str
) -> None:
    """Many writers at once, one reader reading what is committed: the reader's rows are
    always consecutive (a row numbered below one it saw never commits later)."""
    stores = [PostgresStore(pg_url, schema=schema) for _ in range(3)]
    try:
        logs = [log for store in stores if (log := store.event_log()) is not None]
        assert len(logs) == 3
        writing = threading.Event()

        def write(log: EventLog, writer: int) -> list[int]:
            given: list[int] = []
            for n in range(60):
                batch = [
                    EventRecord(f"w{writer}", "chat", "operators", None, False, f'{{"n":{n}}}', n)
                    for _ in range(1 + n % 3)
                ]
                seqs = log.append(batch)
                assert seqs == list(range(seqs[0], seqs[0] + len(batch)))
                given += seqs
            return given

        def read(log: EventLog) -> tuple[list[int], list[tuple[int, int]]]:
            seen: list[int] = []
            holes: list[tuple[int, int]] = []
            last = 0
            while writing.is_set() or last < (log.bounds() or (0, 0))[1]:
                for row in log.read_after(last, 1000):
                    if row.seq != last + 1:
                        holes.append((last, row.seq))
                    last = row.seq
                    seen.append(row.seq)
            return seen, holes

        writing.set()
        with ThreadPoolExecutor(max_workers=7) as pool:
            reader = pool.submit(read, logs[0])
            writers = [pool.submit(write, log, n) for n, log in enumerate(logs * 2)]
            try:
                given = sorted(seq for writer in writers for seq in writer.result())
            finally:
                writing.clear()
            seen, holes = reader.result()
        expected = list(range(1, 6 * sum(1 + n % 3 for n in range(60)) + 1))
        assert given == expected  # every number given once
        assert holes == []
        assert seen == expected
    finally:
        for store in stores:
            store.close()


class RingsLost(EventLog):
    """The store's event log with every ring of its doorbell lost on the way: the doorbell
    listens for real, but what it hears is never passed on."""

    def __init__(self, log: EventLog) -> None:
        self._log = log

    def stream_id(self) -> str:
        return self._log.stream_id()

    def append(self, records: Sequence[EventRecord]) -> list[int]:
        return self._log.append(records)

    def read_after(self, seq: int, limit: int) -> list[LoggedEvent]:
        return self._log.read_after(seq, limit)

    def bounds(self) -> LogBounds | None:
        return self._log.bounds()

    def prune(self, older_than_ts: int, keep_at_least: int) -> int:
        return self._log.prune(older_than_ts, keep_at_least)

    async def doorbell(self) -> AsyncGenerator[int | None, None]:
        async with contextlib.aclosing(self._log.doorbell()) as rings:
            async for _ in rings:
                pass
        yield None  # (the real doorbell never ends but by failing)


async def test_lost_notifications_only_delay_delivery(pg_url: str, schema: str) -> None:
    async with (
        instance(pg_url, schema, "a") as a,
        instance(pg_url, schema, "b", poll_interval_s=0.05, rings_lost=True) as b,
    ):
        publish_mix(a.bus, 3, "x")
        await delivered(b, 3)  # by the reader's poll alone
        assert b.recorder.frames() == a.recorder.frames()
        b.bus.publish("chat", {"from": "b"})
        await b.bus.caught_up()  # its own writes it reads back without a ring
        assert b.recorder.seqs() == [1, 2, 3, 4]


class FrameRecorder:
    """A raw client connection keeping every frame, events and responses, in arrival order."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []
        self.hello: dict[str, Any] = {}

    @classmethod
    async def connect(cls, url: str) -> FrameRecorder:
        recorder = cls(await websockets.connect(url + "/ws"))
        await recorder.until(lambda frame: frame.get("event") == "connect.challenge")
        hello = await recorder.call("connect", connect_params(token=TOKEN))
        assert hello["ok"] is True, hello
        recorder.hello = hello["payload"]
        recorder.frames.clear()
        return recorder

    async def until(self, matches: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            frame: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), 10))
            self.frames.append(frame)
            if matches(frame):
                return frame

    async def call(self, method: str, params: Any) -> dict[str, Any]:
        request_id = f"r{len(self.frames)}-{method}"
        await self.ws.send(
            json.dumps({"type": "req", "id": request_id, "method": method, "params": params})
        )
        return await self.until(lambda frame: frame.get("id") == request_id)

    def changes(self) -> list[dict[str, Any]]:
        return [f for f in self.frames if f.get("event") == "sessions.changed"]


async def test_two_gateways_on_one_schema_serve_one_stream(
    tmp_path: Path, pg_url: str, schema: str
) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    store_url = f"{pg_url}?schema={schema}"
    async with (
        running_gateway(tmp_path / "a", gateway_settings=settings, store_url=store_url) as a,
        running_gateway(tmp_path / "b", gateway_settings=settings, store_url=store_url) as b,
    ):
        caller = await FrameRecorder.connect(a.url)
        watcher = await FrameRecorder.connect(b.url)
        try:
            assert caller.hello["server"]["bootId"] == watcher.hello["server"]["bootId"]
            boot_id = watcher.hello["server"]["bootId"]
            assert (await caller.call("sessions.subscribe", {}))["ok"] is True
            assert (await watcher.call("sessions.subscribe", {}))["ok"] is True
            answer = await caller.call("sessions.patch", {"key": "agent:main:a", "label": "one"})
            assert answer["ok"] is True, answer
            # The request's own event reached its client before the response.
            (own,) = caller.changes()
            assert caller.frames.index(own) < caller.frames.index(answer)
            seen = await watcher.until(lambda frame: frame.get("event") == "sessions.changed")
            assert seen == own  # the same seq and payload on the other gateway
            await watcher.ws.close()

            for label in ("two", "three"):
                await caller.call("sessions.patch", {"key": "agent:main:a", "label": label})
            # (Had b not read them yet, the ones it had would be replayed, the rest sent live.)
            await eventually(
                lambda: b.gateway.bus.last_seq == a.gateway.bus.last_seq, what="b to read them"
            )
            back = await FrameRecorder.connect(b.url)  # the watcher reconnects to b
            try:
                resumed = await back.call(
                    "sessions.subscribe", {"afterSeq": seen["seq"], "bootId": boot_id}
                )
                assert resumed["ok"] is True, resumed
                assert resumed["payload"]["replayed"] == 2
                assert back.changes() == caller.changes()[1:]
                assert [c["payload"]["label"] for c in back.changes()] == ["two", "three"]
            finally:
                await back.ws.close()
        finally:
            await caller.ws.close()
            await watcher.ws.close()
