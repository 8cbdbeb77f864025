"""The outbox delivery loop against a real SQLite store, on virtual time: once per message,
retries after the channel's wait or a backoff, a dead target given up once and never in the way
of the others, messages to one conversation in order."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from clawline.channels import ChannelRegistry, DeliveryFailed, TargetGone
from clawline.channels.outbox_delivery import MAX_ATTEMPTS, OutboxDelivery, backoff_ms
from clawline.records.outbox import OutboxItem, OutboxTarget
from clawline.store.sqlite.store import SQLiteStore
from clawline.store.workers import StoreWorkers
from clawline.testing import FakeClock, eventually
from clawline.testing.channels import FakeChannel, threads_channel

ROOM = OutboxTarget("forum", "default", "!room")
OTHER = OutboxTarget("forum", "default", "!other")


@dataclass
class Loop:
    store: SQLiteStore
    clock: FakeClock
    channel: FakeChannel
    delivery: OutboxDelivery

    def queue(self, key: str, target: OutboxTarget = ROOM) -> int:
        item = OutboxItem(
            target=target,
            text=f"message {key}",
            kind="reply",
            dedupe_key=key,
            created_at=self.clock.now_ms(),
            next_attempt_at=self.clock.now_ms(),
        )
        with self.store.transaction() as tx:
            [queued] = tx.outbox.enqueue([item])
        assert queued.id is not None
        return queued.id

    def row(self, item_id: int) -> OutboxItem:
        found = self.store.outbox.get(item_id)
        assert found is not None
        return found


@pytest.fixture
async def loop(tmp_path: Path) -> AsyncIterator[Loop]:
    store = SQLiteStore(tmp_path / "outbox.db")
    workers = StoreWorkers(store)
    clock = FakeClock()
    channel = threads_channel("forum")
    delivery = OutboxDelivery(
        store=store, workers=workers, clock=clock, channels=ChannelRegistry([channel])
    )
    try:
        yield Loop(store, clock, channel, delivery)
    finally:
        workers.close()
        store.close()


async def test_a_message_is_sent_once_and_marked_with_the_channels_id(loop: Loop) -> None:
    item_id = loop.queue("a")
    assert await loop.delivery.deliver_due() == 1
    assert await loop.delivery.deliver_due() == 0
    assert [(sent.to, sent.text) for sent in loop.channel.sent] == [("!room", "message a")]
    row = loop.row(item_id)
    assert (row.status, row.remote_id, row.attempts) == ("delivered", "forum-msg-1", 1)


async def test_429_then_500_then_success_delivers_exactly_once(loop: Loop) -> None:
    loop.channel.fail_next(
        [DeliveryFailed("429 Too Many Requests", retry_after_s=3), DeliveryFailed("500")]
    )
    item_id = loop.queue("a")
    await loop.delivery.deliver_due()
    waited = loop.row(item_id)
    assert (waited.status, waited.attempts, waited.last_error) == (
        "pending",
        1,
        "429 Too Many Requests",
    )
    assert waited.next_attempt_at == loop.clock.now_ms() + 3_000  # the channel's own wait
    loop.clock.advance(2_999)
    assert await loop.delivery.deliver_due() == 0
    loop.clock.advance(1)
    await loop.delivery.deliver_due()
    assert loop.row(item_id).next_attempt_at == loop.clock.now_ms() + backoff_ms(2, None)
    loop.clock.advance(backoff_ms(2, None))
    await loop.delivery.deliver_due()
    assert loop.channel.attempts == 3
    assert len(loop.channel.sent) == 1
    assert (loop.row(item_id).status, loop.row(item_id).attempts) == ("delivered", 3)
    loop.clock.advance(60_000)
    await loop.delivery.deliver_due()
    assert len(loop.channel.sent) == 1


async def test_a_gone_target_fails_once_logged_once_and_holds_up_no_one(
    loop: Loop, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="clawline.channels.outbox")
    loop.channel.fail_next([TargetGone("M_FORBIDDEN: the bot was removed from the room")])
    dead = loop.queue("dead", ROOM)
    alive = loop.queue("alive", OTHER)
    await loop.delivery.deliver_due()
    row = loop.row(dead)
    assert (row.status, row.last_error) == (
        "failed",
        "M_FORBIDDEN: the bot was removed from the room",
    )
    assert loop.row(alive).status == "delivered"
    loop.clock.advance(3_600_000)
    await loop.delivery.deliver_due()
    logged = [r.getMessage() for r in caplog.records if "failed for good" in r.getMessage()]
    assert logged == [
        f"outbox #{dead} to forum/default/!room failed for good: "
        "M_FORBIDDEN: the bot was removed from the room"
    ]
    assert [sent.text for sent in loop.channel.sent] == ["message alive"]


async def test_a_later_message_never_overtakes_one_waiting_for_its_retry(loop: Loop) -> None:
    loop.channel.fail_next([DeliveryFailed("502 Bad Gateway")])
    first, second = loop.queue("first"), loop.queue("second")
    await loop.delivery.deliver_due()
    assert loop.channel.sent == []
    held = loop.row(second)
    assert (held.status, held.attempts) == ("pending", 0)  # waiting is not an attempt
    assert held.next_attempt_at == loop.row(first).next_attempt_at
    loop.clock.advance(backoff_ms(1, None))
    await loop.delivery.deliver_due()
    assert [sent.text for sent in loop.channel.sent] == ["message first", "message second"]


async def test_a_channel_without_an_adapter_fails_with_the_reason(loop: Loop) -> None:
    item_id = loop.queue("a", OutboxTarget("sms", "default", "+100"))
    await loop.delivery.deliver_due()
    row = loop.row(item_id)
    assert (row.status, row.last_error) == ("failed", "channel sms is not configured")


async def test_the_last_attempt_gives_up(loop: Loop) -> None:
    loop.channel.fail_next([DeliveryFailed("500")] * MAX_ATTEMPTS)
    item_id = loop.queue("a")
    for _ in range(MAX_ATTEMPTS):
        await loop.delivery.deliver_due()
        loop.clock.advance(10 * 60_000)
    row = loop.row(item_id)
    assert (row.status, row.attempts) == ("failed", MAX_ATTEMPTS)
    assert row.last_error == f"gave up after {MAX_ATTEMPTS} attempts: 500"
    assert loop.channel.sent == []


async def test_the_loop_sleeps_until_woken_or_due(loop: Loop) -> None:
    task = asyncio.create_task(loop.delivery.run())
    try:
        await eventually(lambda: loop.delivery.passes >= 1 and loop.clock.sleepers == 1)
        loop.queue("woken")
        loop.delivery.wake()
        await eventually(lambda: len(loop.channel.sent) == 1)
        loop.channel.fail_next([DeliveryFailed("busy", retry_after_s=5)])
        loop.queue("retried")
        loop.delivery.wake()
        await eventually(lambda: loop.channel.attempts == 2 and loop.clock.sleepers == 1)
        assert loop.clock.next_deadline == loop.clock.now_ms() + 5_000
        await loop.clock.run_for(5_000)
        await eventually(lambda: len(loop.channel.sent) == 2)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_slow_conversation_holds_up_neither_another_nor_what_is_queued_meanwhile(
    loop: Loop,
) -> None:
    task = asyncio.create_task(loop.delivery.run())
    try:
        release = loop.channel.hold("!room")
        loop.queue("slow")
        loop.delivery.wake()
        await eventually(lambda: loop.channel.attempts == 1)  # in flight, and staying there
        loop.queue("second", ROOM)
        loop.queue("fast", OTHER)
        loop.delivery.wake()
        await eventually(lambda: [sent.text for sent in loop.channel.sent] == ["message fast"])
        release.set()
        await eventually(lambda: len(loop.channel.sent) == 3)
        assert [sent.text for sent in loop.channel.sent] == [
            "message fast",
            "message slow",
            "message second",  # after the one before it, to the same conversation
        ]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
