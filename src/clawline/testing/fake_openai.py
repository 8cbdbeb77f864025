"""A local fake model server: OpenAI-compatible ``POST /v1/chat/completions`` and
Anthropic-compatible ``POST /v1/messages``, streamed (SSE) or whole, answering from a *script*.

The script is a list of :class:`FakeReply` (used in order, one per request; a request past the
end is answered 500 ``fake model server: script exhausted``) or a callable deciding the reply
from the :class:`FakeRequest` (sync or async). Every request is recorded::

    async with FakeModelServer([FakeReply(tool_calls=(FakeToolCall("write_file", {...}),)),
                                FakeReply(text="done")]) as server:
        ... point a provider at server.openai_base_url (or server.anthropic_base_url) ...
        assert server.requests[1].body["messages"][-1]["role"] == "tool"

As a subprocess (``python -m clawline.testing.fake_openai --script replies.json [--port N]``)
it prints ``fake model server listening on http://127.0.0.1:<port>`` and serves until killed;
the script file is a JSON list of reply objects (:meth:`FakeReply.from_json`) and
``GET /_requests`` returns the recorded requests.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from clawline.testing.fake_openai_wire import (
    FakeReply,
    FakeToolCall,
    anthropic_events,
    anthropic_message,
    openai_chunks,
    openai_completion,
)
from clawline.testing.loopback_server import LoopbackServer

__all__ = ["FakeModelServer", "FakeReply", "FakeRequest", "FakeToolCall", "Script"]

_RECORDED_HEADERS = ("authorization", "x-api-key", "anthropic-version")


@dataclass(frozen=True, slots=True)
class FakeRequest:
    api: Literal["openai", "anthropic"]
    body: dict[str, Any]
    headers: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"api": self.api, "body": self.body, "headers": self.headers}


Script: TypeAlias = Sequence[FakeReply] | Callable[[FakeRequest], FakeReply | Awaitable[FakeReply]]


def _sse(payloads: Iterator[dict[str, Any]], reply: FakeReply, *, named: bool) -> Response:
    async def body() -> AsyncIterator[bytes]:
        for payload in payloads:
            if reply.delay_ms:
                await asyncio.sleep(reply.delay_ms / 1000)
            event = f"event: {payload['type']}\n" if named else ""
            yield f"{event}data: {json.dumps(payload)}\n\n".encode()
        if not named:
            yield b"data: [DONE]\n\n"

    return StreamingResponse(body(), media_type="text/event-stream")


class FakeModelServer:
    def __init__(self, script: Script = ()) -> None:
        self.script = script
        self.requests: list[FakeRequest] = []
        self._used = 0
        self.url = ""
        self._server = LoopbackServer("fake model server")

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    async def _reply(self, request: FakeRequest) -> FakeReply:
        self.requests.append(request)
        if callable(self.script):
            decided = self.script(request)
            return await decided if inspect.isawaitable(decided) else decided
        if self._used >= len(self.script):
            return FakeReply(status=500, error="fake model server: script exhausted")
        self._used += 1
        return self.script[self._used - 1]

    async def _record(self, api: Literal["openai", "anthropic"], http: Request) -> FakeRequest:
        body = await http.json()
        headers = {name: http.headers[name] for name in _RECORDED_HEADERS if name in http.headers}
        return FakeRequest(api=api, body=body, headers=headers)

    async def _chat(self, http: Request) -> Response:
        request = await self._record("openai", http)
        reply = await self._reply(request)
        if reply.status >= 400:
            error = {"message": reply.error, "type": "server_error", "code": None}
            return JSONResponse({"error": error}, status_code=reply.status)
        if request.body.get("stream"):
            return _sse(openai_chunks(reply, request.body), reply, named=False)
        return JSONResponse(openai_completion(reply, request.body))

    async def _messages(self, http: Request) -> Response:
        request = await self._record("anthropic", http)
        reply = await self._reply(request)
        if reply.status >= 400:
            error = {"type": "api_error", "message": reply.error}
            return JSONResponse({"type": "error", "error": error}, status_code=reply.status)
        if request.body.get("stream"):
            return _sse(anthropic_events(reply, request.body), reply, named=True)
        return JSONResponse(anthropic_message(reply, request.body))

    async def _requests(self, http: Request) -> Response:
        return JSONResponse([request.to_json() for request in self.requests])

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/messages", self._messages, methods=["POST"]),
                Route("/_requests", self._requests, methods=["GET"]),
            ]
        )

    async def start(self, port: int = 0) -> str:
        """Serve on ``127.0.0.1:port`` (0: any free port) in this event loop; the base URL."""
        self.url = await self._server.start(self.app(), port)
        return self.url

    async def stop(self) -> None:
        await self._server.stop()

    async def __aenter__(self) -> FakeModelServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def _serve_forever(script: list[FakeReply], port: int) -> None:
    server = FakeModelServer(script)
    url = await server.start(port)
    print(f"fake model server listening on {url}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.stop()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fake OpenAI/Anthropic model server.")
    parser.add_argument("--script", type=Path, help="a JSON list of replies")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    raw = json.loads(args.script.read_text(encoding="utf-8")) if args.script else []
    script = [FakeReply.from_json(item) for item in raw]
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_forever(script, args.port))


if __name__ == "__main__":
    main(sys.argv[1:])
