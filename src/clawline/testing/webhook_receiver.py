"""A local receiver of the webhook channel's outbound POSTs, for tests.

::

    async with WebhookReceiver() as receiver:        # http://127.0.0.1:<port>/hook
        ... [channels.webhook] url = receiver.url ...
        receiver.answer_next([429, 500])             # then 200 again
        post = await receiver.wait_for(lambda post: post.body["to"] == "alice")

Every POST is recorded (:class:`ReceivedPost`: headers, JSON body, the status it was answered
with). A 429 carries ``Retry-After: 0``. Posts answered 2xx are also :attr:`delivered`, and a
repeated ``Idempotency-Key`` is answered 200 without being delivered twice — what a careful
receiver does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from clawline.testing.loopback_server import LoopbackServer

__all__ = ["ReceivedPost", "WebhookReceiver"]


@dataclass(frozen=True, slots=True)
class ReceivedPost:
    headers: dict[str, str]
    body: Any
    status: int
    repeat: bool = False
    """Its ``Idempotency-Key`` had been delivered before."""


@dataclass
class WebhookReceiver:
    posts: list[ReceivedPost] = field(default_factory=list)
    """Every POST, in arrival order."""
    url: str = ""
    _answers: list[int] = field(default_factory=list)
    _keys: set[str] = field(default_factory=set)
    _server: LoopbackServer = field(default_factory=lambda: LoopbackServer("webhook receiver"))

    @property
    def delivered(self) -> list[ReceivedPost]:
        """The POSTs answered 2xx, repeats left out: what a user would see."""
        return [post for post in self.posts if 200 <= post.status < 300 and not post.repeat]

    def answer_next(self, statuses: Iterable[int]) -> None:
        """Answer the next POSTs with these statuses, one each, before 200 again."""
        self._answers.extend(statuses)

    def answer_normally(self) -> None:
        """Forget the statuses still scripted: answer 200 from now on."""
        self._answers.clear()

    async def _receive(self, request: Request) -> JSONResponse:
        body = await request.json()
        headers = {name.lower(): value for name, value in request.headers.items()}
        status = self._answers.pop(0) if self._answers else 200
        key = headers.get("idempotency-key", "")
        repeat = 200 <= status < 300 and bool(key) and key in self._keys
        if 200 <= status < 300 and key:
            self._keys.add(key)
        self.posts.append(ReceivedPost(headers, body, status, repeat))
        extra = {"Retry-After": "0"} if status == 429 else None
        return JSONResponse({"id": f"hook-{len(self.posts)}"}, status_code=status, headers=extra)

    async def wait_for(
        self, predicate: Callable[[ReceivedPost], bool], timeout: float = 10.0
    ) -> ReceivedPost:
        """The first delivered POST matching ``predicate``, waiting up to ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            for post in self.delivered:
                if predicate(post):
                    return post
            if time.monotonic() > deadline:
                raise AssertionError(f"no matching POST; received {self.posts!r}")
            await asyncio.sleep(0.01)

    async def __aenter__(self) -> WebhookReceiver:
        app = Starlette(routes=[Route("/hook", self._receive, methods=["POST"])])
        self.url = await self._server.start(app) + "/hook"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._server.stop()
