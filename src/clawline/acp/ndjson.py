"""Newline-delimited JSON-RPC over asyncio streams, encoded with orjson.

A message-level transport for the SDK's :class:`acp.connection.Connection` (its ``Transport``
seam: ``send``/``receive``/``close``), in place of the SDK's stdlib-``json`` framing: encoding
and decoding a ``session/list`` page of 100 rows costs a third as much. It is also where the
bridge enforces JSON-RPC 2.0 on what it reads, because the connection offers no hook before it
dispatches a decoded message:

- lines are read in bounded chunks (:class:`clawline.acp.lines.LineReader`); a line
  longer than ``line_limit`` is answered ``-32700`` (``id: null``) and skipped without being
  held;
- every line goes through :func:`clawline.acp.jsonrpc_envelope.decode`; refusals are answered
  here and never reach the connection;
- backpressure: at most ``max_pending`` requests are between being read and being answered.
  When that many are pending, :meth:`NdjsonTransport.receive` waits for an answer to go out
  before it reads on, so the client's writes block on the pipe instead of piling up here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from typing import Any, Final

import orjson

from clawline.acp.jsonrpc_envelope import Dropped, Refusal, RequestId, decode, overlong
from clawline.acp.lines import OVERLONG, LineReader

log = logging.getLogger("clawline.acp")

MAX_PENDING_REQUESTS: Final = 256
"""Requests read and not yet answered, at most (then stdin is not read until one is)."""


class NdjsonTransport:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        line_limit: int,
        max_pending: int = MAX_PENDING_REQUESTS,
    ) -> None:
        self._lines = LineReader(reader, line_limit)
        self._line_limit = line_limit
        self._writer = writer
        self._max_pending = max_pending
        self._slots = asyncio.Semaphore(max_pending)
        self._pending: Counter[RequestId] = Counter()
        self.paused = False
        """Whether :meth:`receive` is waiting for an answer to go out before it reads on."""

    @property
    def pending(self) -> int:
        """Requests read and not yet answered."""
        return self._pending.total()

    async def send(self, message: dict[str, Any]) -> None:
        answered = self._answers_pending(message)
        try:
            await self._write(message)
        finally:
            if answered:
                self._slots.release()

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._lines.next_line()
            if line is None:
                return None
            if line is OVERLONG:
                await self._refuse(overlong(self._line_limit))
                continue
            if not line or line.isspace():
                continue
            message = decode(line)
            if isinstance(message, Refusal):
                await self._refuse(message)
                continue
            if isinstance(message, Dropped):
                log.info("dropped a message: %s", message.details)
                continue
            if "method" in message and "id" in message:
                await self._take_slot()
                self._pending[message["id"]] += 1
            return message

    async def _take_slot(self) -> None:
        if not self._slots.locked():
            await self._slots.acquire()
            return
        log.info("%d requests pending: not reading stdin until one is answered", self._max_pending)
        self.paused = True
        try:
            await self._slots.acquire()
        finally:
            self.paused = False

    def _answers_pending(self, message: dict[str, Any]) -> bool:
        """Whether ``message`` answers a request read by :meth:`receive` (and frees its slot)."""
        if "method" in message or "id" not in message:
            return False
        request_id = message["id"]
        count = self._pending[request_id]
        if count == 0:
            return False
        if count == 1:
            del self._pending[request_id]
        else:
            self._pending[request_id] = count - 1
        return True

    async def _refuse(self, refusal: Refusal) -> None:
        log.info("refused a message: %s", refusal.details)
        await self._write(refusal.answer())

    async def _write(self, message: dict[str, Any]) -> None:
        # One write per message: messages from concurrent tasks never interleave.
        self._writer.write(orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE))
        await self._writer.drain()

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
            await self._writer.wait_closed()
