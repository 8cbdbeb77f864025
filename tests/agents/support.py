"""Runners and helpers shared by the run manager's unit tests and the chat/agent gateway tests."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, cast

from websockets.asyncio.client import ClientConnection

from clawline.agents.runner import RunContext, RunOutput
from clawline.gateway.bus import Event
from tests.gateway.wire import WireClient

__all__ = [
    "BlockingRunner",
    "FailingRunner",
    "RecordingClient",
    "StubbornRunner",
    "ToolRunner",
    "agent_events",
    "chat_events",
    "request",
    "wait_event",
]

_ids = itertools.count(1)


class FailingRunner:
    """Streams a little text, then raises."""

    def __init__(self, message: str = "model exploded", partial: str = "") -> None:
        self.message = message
        self.partial = partial

    async def run(self, ctx: RunContext) -> RunOutput:
        if self.partial:
            await ctx.emit_text(self.partial)
        raise RuntimeError(self.message)


class BlockingRunner:
    """Streams ``partial`` and then waits until :attr:`release` is set (or it is cancelled)."""

    def __init__(self, partial: str = "thinking") -> None:
        self.partial = partial
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.contexts: list[RunContext] = []

    async def run(self, ctx: RunContext) -> RunOutput:
        self.contexts.append(ctx)
        if self.partial:
            await ctx.emit_text(self.partial)
        self.started.set()
        await self.release.wait()
        return RunOutput(text=f"{self.partial} done", stop_reason="stop")


class StubbornRunner:
    """Ignores cancellation until ``holdout`` seconds have passed."""

    def __init__(self, holdout: float) -> None:
        self.holdout = holdout
        self.started = asyncio.Event()
        self.finished = asyncio.Event()

    async def run(self, ctx: RunContext) -> RunOutput:
        self.started.set()
        loop = asyncio.get_running_loop()
        end = loop.time() + self.holdout
        while loop.time() < end:
            try:
                await asyncio.sleep(end - loop.time())
            except asyncio.CancelledError:
                continue
        self.finished.set()
        return RunOutput(text="too late")


class ToolRunner:
    """Reports one tool call and answers with the tool's result."""

    async def run(self, ctx: RunContext) -> RunOutput:
        await ctx.emit_tool("start", "lookup", "call-1", args={"q": ctx.message})
        await ctx.emit_tool("update", "lookup", "call-1", partial_result="half")
        await ctx.emit_tool("result", "lookup", "call-1", result={"answer": 42}, is_error=False)
        history = await ctx.history()
        await ctx.emit_text(f"answer 42 after {len(history)} messages")
        return RunOutput(usage={"input": 3, "output": 4})


def chat_events(events: Iterable[Event], run_id: str | None = None) -> list[dict[str, Any]]:
    return [
        dict(event.payload)
        for event in events
        if event.name == "chat" and (run_id is None or event.payload["runId"] == run_id)
    ]


def agent_events(events: Iterable[Event], run_id: str | None = None) -> list[dict[str, Any]]:
    return [
        dict(event.payload)
        for event in events
        if event.name == "agent" and (run_id is None or event.payload["runId"] == run_id)
    ]


async def request(client: WireClient, method: str, params: Any) -> str:
    """Send a request without waiting; return its id (for methods that answer twice)."""
    request_id = f"q{next(_ids)}"
    await client.send({"type": "req", "id": request_id, "method": method, "params": params})
    return request_id


async def wait_event(
    client: WireClient,
    name: str,
    predicate: Callable[[dict[str, Any]], bool] = lambda payload: True,
    *,
    timeout: float = 5.0,
) -> dict[str, Any]:
    """The first event ``name`` whose payload satisfies ``predicate`` (waiting for it)."""

    async def find() -> dict[str, Any]:
        index = 0
        while True:
            frame = await client.next_event(name, after=index, timeout=timeout)
            if predicate(frame.get("payload") or {}):
                return frame
            index = client.events.index(frame) + 1

    return await asyncio.wait_for(find(), timeout)


def run_end(run_id: str) -> Callable[[dict[str, Any]], bool]:
    """Matches the ``sessions.changed`` that ends run ``run_id``."""
    return lambda p: p.get("runId") == run_id and p.get("phase") in ("end", "error")


class _Recorder:
    """A WebSocket wrapper that records every frame received, in arrival order."""

    def __init__(self, ws: ClientConnection, frames: list[dict[str, Any]]) -> None:
        self._ws = ws
        self._frames = frames

    async def send(self, data: str) -> None:
        await self._ws.send(data)

    async def close(self) -> None:
        await self._ws.close()

    async def __aiter__(self) -> AsyncIterator[str | bytes]:
        async for raw in self._ws:
            self._frames.append(json.loads(raw))
            yield raw


class RecordingClient(WireClient):
    """A :class:`WireClient` that also keeps ``frames``: responses and events interleaved."""

    def __init__(self, ws: ClientConnection) -> None:
        self.frames: list[dict[str, Any]] = []
        super().__init__(cast(ClientConnection, _Recorder(ws, self.frames)))

    @classmethod
    async def open_recording(cls, url: str) -> RecordingClient:
        client = await cls.open(url)
        assert isinstance(client, RecordingClient)
        return client
