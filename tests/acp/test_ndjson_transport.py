"""The bridge's stdin side in-process: bounded lines and the pending-request bound.

Real asyncio streams: a :class:`asyncio.StreamReader` fed through its protocol API for input,
a socket pair for the answers the transport writes.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import orjson
import pytest

from clawline.acp.lines import OVERLONG, LineReader
from clawline.acp.ndjson import NdjsonTransport

DEADLINE_S = 5.0


def fed(data: bytes, *, chunk: int) -> asyncio.StreamReader:
    """A reader holding ``data`` then the end of the stream; ``chunk`` is its ``limit``."""
    reader = asyncio.StreamReader(limit=chunk)
    reader.feed_data(data)
    reader.feed_eof()
    return reader


async def all_lines(reader: LineReader) -> list[object]:
    lines: list[object] = []
    while (line := await reader.next_line()) is not None:
        lines.append(line if line is OVERLONG else bytes(line))
    return lines


@pytest.mark.parametrize("chunk", [1, 3, 8, 1024])
async def test_lines_at_the_limit_pass_and_longer_ones_are_skipped(chunk: int) -> None:
    data = b"a\n\n12345678\n123456789\nnext\n" + b"x" * 100 + b"\nlast"
    lines = await all_lines(LineReader(fed(data, chunk=chunk), limit=8))
    assert lines == [b"a", b"", b"12345678", OVERLONG, b"next", OVERLONG, b"last"]


async def test_an_overlong_line_at_the_end_of_the_stream() -> None:
    reader = LineReader(fed(b"ok\n" + b"y" * 50, chunk=4), limit=8)
    assert await all_lines(reader) == [b"ok", OVERLONG]
    assert await reader.next_line() is None


async def test_an_overlong_line_is_refused_before_it_ends() -> None:
    """The overlong line is answered as soon as the limit is passed, before the rest of it
    has even arrived; the rest is then read and dropped chunk by chunk."""
    stream = asyncio.StreamReader(limit=4)
    reader = LineReader(stream, limit=8)
    stream.feed_data(b"z" * 9)
    assert await reader.next_line() is OVERLONG
    following = asyncio.ensure_future(reader.next_line())
    for _ in range(100):
        stream.feed_data(b"z" * 1000)
    stream.feed_data(b"\nafter\n")
    line = await asyncio.wait_for(following, DEADLINE_S)
    assert isinstance(line, bytearray)
    assert line == b"after"


@asynccontextmanager
async def transport_over(
    data: bytes, max_pending: int
) -> AsyncIterator[tuple[NdjsonTransport, asyncio.StreamReader]]:
    """A transport reading ``data``; its answers can be read from the returned reader."""
    ours, theirs = socket.socketpair()
    _, writer = await asyncio.open_connection(sock=ours)
    answers, peer = await asyncio.open_connection(sock=theirs)
    transport = NdjsonTransport(
        fed(data, chunk=1024), writer, line_limit=1024, max_pending=max_pending
    )
    try:
        yield transport, answers
    finally:
        await transport.close()
        peer.close()
        await peer.wait_closed()


def request(request_id: int) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": "session/list"}) + b"\n"


async def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.001)


async def test_reading_waits_while_max_pending_requests_are_unanswered() -> None:
    notification = b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}\n'
    data = request(1) + request(2) + request(3) + notification + b"[]\n" + request(4)
    async with transport_over(data, max_pending=2) as (transport, answers):
        assert [(await transport.receive() or {}).get("id") for _ in range(2)] == [1, 2]
        third = asyncio.ensure_future(transport.receive())
        await until(lambda: transport.paused)
        assert not third.done()
        assert transport.pending == 2

        # an answer for an id nobody is waiting on frees nothing
        await transport.send({"jsonrpc": "2.0", "id": 99, "result": {}})
        assert transport.pending == 2
        assert not third.done()

        await transport.send({"jsonrpc": "2.0", "id": 1, "result": {"sessions": []}})
        assert (await asyncio.wait_for(third, DEADLINE_S) or {}).get("id") == 3
        assert not transport.paused
        assert transport.pending == 2

        # a notification needs no slot; the batch is refused without one; then request 4 waits
        assert (await transport.receive() or {}).get("method") == "session/cancel"
        fourth = asyncio.ensure_future(transport.receive())
        await until(lambda: transport.paused)
        await transport.send({"jsonrpc": "2.0", "id": 2, "result": {"sessions": []}})
        assert (await asyncio.wait_for(fourth, DEADLINE_S) or {}).get("id") == 4
        written = [
            orjson.loads(await asyncio.wait_for(answers.readline(), DEADLINE_S)) for _ in range(4)
        ]
        assert [answer["id"] for answer in written] == [99, 1, None, 2]
        assert written[2]["error"]["code"] == -32600
        assert transport.pending == 2  # requests 3 and 4
        assert await transport.receive() is None
