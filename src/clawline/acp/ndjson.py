"""Newline-delimited JSON-RPC over asyncio streams, encoded with orjson.

A message-level transport for the SDK's :class:`acp.connection.Connection` (its ``Transport``
seam: ``send``/``receive``/``close``), in place of the SDK's stdlib-``json`` framing: encoding
and decoding a ``session/list`` page of 100 rows costs a third as much, and a line that is not
a JSON object is skipped (logged) instead of stopping the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import orjson

__all__ = ["NdjsonTransport"]

log = logging.getLogger("clawline.acp")


class NdjsonTransport:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def send(self, message: dict[str, Any]) -> None:
        # One write per message: messages from concurrent tasks never interleave.
        self._writer.write(orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE))
        await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if not line:
                return None
            if not line.strip():
                continue
            try:
                message = orjson.loads(line)
            except orjson.JSONDecodeError:
                log.warning("ignoring a line that is not JSON (%d bytes)", len(line))
                continue
            if isinstance(message, dict):
                return message
            log.warning("ignoring a JSON line that is not an object")

    async def _read_line(self) -> bytes:
        chunks: list[bytes] = []
        while True:
            try:
                chunks.append(await self._reader.readuntil(b"\n"))
                return b"".join(chunks)
            except asyncio.LimitOverrunError as overrun:
                chunks.append(await self._reader.readexactly(overrun.consumed))
            except asyncio.IncompleteReadError as eof:
                chunks.append(eof.partial)
                return b"".join(chunks)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
            await self._writer.wait_closed()
