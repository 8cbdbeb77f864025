"""Slow subscribers: a client that stops reading loses *drop-if-slow* events (with a logged
warning) and is disconnected when it falls far behind on frames that cannot be dropped, while
a fast client on the same gateway gets everything and the publisher never waits."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from clawline.gateway.bus import Audience
from clawline.gateway.connection import Connection
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.gateway.conftest import TOKEN
from tests.gateway.wire import WireClient, connect_params

LIMIT = 256 * 1024
BLOB = "x" * 60_000
"""About 60 KB per event: the slow client's socket buffers (a few MB on loopback) fill after
a hundred or so, then its outbox grows past ``LIMIT``."""


class StalledClient:
    """A minimal WebSocket client over a raw socket with a tiny receive buffer. After the
    handshake it reads nothing until :meth:`read_frames` is called."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, port: int) -> StalledClient:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 20)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        status = await reader.readuntil(b"\r\n\r\n")
        assert status.startswith(b"HTTP/1.1 101"), status
        client = cls(reader, writer)
        challenge = await client.frame()
        assert json.loads(challenge[1])["event"] == "connect.challenge"
        client.send(
            {"type": "req", "id": "c", "method": "connect", "params": connect_params(token=TOKEN)}
        )
        assert json.loads((await client.frame())[1])["ok"] is True
        return client

    def send(self, frame: dict[str, Any]) -> None:
        payload = json.dumps(frame).encode()
        mask = os.urandom(4)
        size = len(payload)
        if size < 126:
            head = bytes([0x81, 0x80 | size])
        elif size < 65536:
            head = bytes([0x81, 0x80 | 126]) + size.to_bytes(2, "big")
        else:
            head = bytes([0x81, 0x80 | 127]) + size.to_bytes(8, "big")
        masked = bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))
        self.writer.write(head + mask + masked)

    async def frame(self) -> tuple[int, bytes]:
        head = await self.reader.readexactly(2)
        size = head[1] & 0x7F
        if size == 126:
            size = int.from_bytes(await self.reader.readexactly(2), "big")
        elif size == 127:
            size = int.from_bytes(await self.reader.readexactly(8), "big")
        return head[0] & 0x0F, await self.reader.readexactly(size)

    async def read_frames(self, quiet: float = 1.0) -> tuple[list[dict[str, Any]], bytes | None]:
        """Read until the server closes or stays quiet for ``quiet`` seconds; return the text
        frames and the close frame's payload, if one came."""
        frames: list[dict[str, Any]] = []
        while True:
            try:
                opcode, data = await asyncio.wait_for(self.frame(), quiet)
            except (TimeoutError, asyncio.IncompleteReadError):
                return frames, None
            if opcode == 0x8:
                return frames, data
            frames.append(json.loads(data))

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


@pytest.fixture
async def slow_gw(tmp_path: Path) -> AsyncIterator[RunningGateway]:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN, max_buffered_bytes=LIMIT)
    async with running_gateway(tmp_path, gateway_settings=settings) as running:
        yield running


def server_side(gw: RunningGateway) -> list[Connection]:
    return sorted(gw.gateway.connections.values(), key=lambda c: int(c.id.split("-")[1]))


async def publish_paced(
    gw: RunningGateway, count: int, *, droppable: bool, until: asyncio.Event | None = None
) -> list[float]:
    """Publish ``count`` ~60 KB events a few ms apart (a fast reader keeps up); return how
    long each ``publish`` call took."""
    durations = []
    for n in range(count):
        started = time.perf_counter()
        if droppable:
            gw.gateway.bus.publish(
                "sessions.changed",
                {"sessionKey": f"agent:main:s{n}", "n": n, "blob": BLOB},
                audience=Audience.SESSIONS,
                session_key=f"agent:main:s{n}",
                drop_if_slow=True,
            )
        else:
            gw.gateway.bus.publish("chat", {"n": n, "blob": BLOB})
        durations.append(time.perf_counter() - started)
        await asyncio.sleep(0.003)
        if until is not None and until.is_set():
            break
    return durations


async def test_a_stalled_subscriber_loses_droppable_events_and_a_fast_one_gets_all(
    slow_gw: RunningGateway, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="clawline.gateway")
    stalled = await StalledClient.connect(slow_gw.port)
    fast = await WireClient.open(slow_gw.url)
    try:
        await fast.connect(token=TOKEN)
        slow_conn, fast_conn = server_side(slow_gw)
        for connection in (slow_conn, fast_conn):
            connection.subscribed_sessions = True  # what sessions.subscribe turns on

        durations = await publish_paced(slow_gw, 200, droppable=True)

        assert max(durations) < 0.05, "publishing never waits for a subscriber"
        await fast.next_event("sessions.changed", after=len(fast.events) - 1)
        changes = fast.events_named("sessions.changed")
        while len(changes) < 200:
            await fast.next_event("sessions.changed", after=len(fast.events))
            changes = fast.events_named("sessions.changed")
        assert [frame["payload"]["n"] for frame in changes] == list(range(200))
        assert fast_conn.dropped_events == 0

        assert slow_conn.dropped_events > 0
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any(
            message.startswith(f"dropped sessions.changed for {slow_conn.id}: slow consumer")
            for message in warnings
        ), warnings
        assert slow_conn.id in slow_gw.gateway.connections, "dropping alone does not disconnect"

        # The stalled client reads again: it sees a gap in seq, then live events resume.
        frames, close = await stalled.read_frames()
        assert close is None
        got = [frame["payload"]["n"] for frame in frames]
        assert got == sorted(got)
        assert 0 < len(got) == 200 - slow_conn.dropped_events
        slow_gw.gateway.bus.publish(
            "sessions.changed", {"n": "after"}, audience=Audience.SESSIONS, drop_if_slow=True
        )
        frames, _ = await stalled.read_frames(quiet=0.5)
        assert [frame["payload"]["n"] for frame in frames] == ["after"]
    finally:
        await fast.close()
        await stalled.close()


async def test_a_subscriber_far_behind_on_undroppable_frames_is_disconnected(
    slow_gw: RunningGateway, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="clawline.gateway")
    stalled = await StalledClient.connect(slow_gw.port)
    fast = await WireClient.open(slow_gw.url)
    try:
        await fast.connect(token=TOKEN)
        slow_conn, fast_conn = server_side(slow_gw)

        durations = await publish_paced(slow_gw, 200, droppable=False)

        assert max(durations) < 0.05
        assert slow_conn.id not in slow_gw.gateway.connections, "detached at once"
        assert fast_conn.id in slow_gw.gateway.connections
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any(m.startswith(f"closing {slow_conn.id}: slow consumer") for m in warnings)
        while len(fast.events_named("chat")) < 200:
            await fast.next_event("chat", after=len(fast.events))
        assert [frame["payload"]["n"] for frame in fast.events_named("chat")] == list(range(200))
        assert (await fast.ok("health"))["ok"] is True

        # When the stalled client reads again it finds the close frame: 1008, slow consumer.
        frames, close = await stalled.read_frames(quiet=3)
        assert close is not None
        assert int.from_bytes(close[:2], "big") == 1008
        assert close[2:] == b"slow consumer"
        got = [frame["payload"]["n"] for frame in frames]
        assert got == list(range(len(got))), "no gap before the close"
        assert len(got) < 200
    finally:
        await fast.close()
        await stalled.close()


async def test_a_client_that_asks_for_more_than_it_reads_is_disconnected(
    slow_gw: RunningGateway, caplog: pytest.LogCaptureFixture
) -> None:
    """Replays it never reads do not grow the outbox without bound: the client is
    disconnected instead, and the gateway keeps serving others."""
    caplog.set_level(logging.WARNING, logger="clawline.gateway")
    for n in range(100):  # ~6 MB of retained, undroppable events
        slow_gw.gateway.bus.publish("chat", {"n": n, "blob": BLOB})
    stalled = await StalledClient.connect(slow_gw.port)
    try:
        (connection,) = server_side(slow_gw)
        for n in range(5):
            stalled.send(
                {"type": "req", "id": f"r{n}", "method": "events.replay", "params": {"afterSeq": 0}}
            )
        await stalled.writer.drain()
        for _ in range(100):
            if connection.id not in slow_gw.gateway.connections:
                break
            await asyncio.sleep(0.01)
        assert connection.id not in slow_gw.gateway.connections
        assert any(
            record.getMessage().startswith(f"closing {connection.id}: slow consumer")
            for record in caplog.records
        )
        other = await WireClient.open(slow_gw.url)
        try:
            await other.connect(token=TOKEN)
            assert (await other.ok("health"))["ok"] is True
        finally:
            await other.close()
    finally:
        await stalled.close()
