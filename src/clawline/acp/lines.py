"""Newline-delimited lines from an asyncio stream, each at most ``limit`` bytes, read in chunks.

A line longer than the limit is never held whole: once its first ``limit + 1`` bytes have
arrived :meth:`LineReader.next_line` answers :data:`OVERLONG` and drops what it kept, and the
following call first reads and discards the rest of that line, one chunk at a time, up to its
newline. Memory per line is therefore bounded by the limit plus the stream's own buffer (twice
the ``limit`` the :class:`asyncio.StreamReader` was made with; :data:`READ_CHUNK` for stdin).
"""

from __future__ import annotations

import asyncio
import enum
from typing import Final, Literal

READ_CHUNK: Final = 256 * 1024
"""The ``limit`` of the stdin :class:`asyncio.StreamReader`: the largest piece of a line read
at once (the reader pauses the pipe when it holds twice this)."""


class _End(enum.Enum):
    NEWLINE = "newline"
    STREAM = "end of stream"


class _Overlong(enum.Enum):
    OVERLONG = "overlong"


OVERLONG: Final = _Overlong.OVERLONG
"""A line longer than the limit (refused; the rest of it is skipped)."""


class LineReader:
    def __init__(self, reader: asyncio.StreamReader, limit: int) -> None:
        self._reader = reader
        self._limit = limit
        self._skipping = False

    async def next_line(self) -> bytearray | Literal[_Overlong.OVERLONG] | None:
        """The next line without its newline; :data:`OVERLONG`; ``None`` at the end."""
        if self._skipping:
            await self._skip_rest()
        line = bytearray()
        while True:
            piece, end = await self._piece()
            if end is _End.STREAM and not piece and not line:
                return None
            if len(line) + len(piece) > self._limit:
                self._skipping = end is None
                return OVERLONG
            line += piece
            if end is not None:
                return line

    async def _skip_rest(self) -> None:
        end = None
        while end is None:
            _, end = await self._piece()
        self._skipping = False

    async def _piece(self) -> tuple[bytes, _End | None]:
        """Up to the next newline (dropped) or as much as the stream buffers, and what ended
        the line there (``None``: it goes on)."""
        try:
            return (await self._reader.readuntil(b"\n"))[:-1], _End.NEWLINE
        except asyncio.LimitOverrunError as overrun:
            return await self._reader.readexactly(overrun.consumed), None
        except asyncio.IncompleteReadError as eof:
            return eof.partial, _End.STREAM
