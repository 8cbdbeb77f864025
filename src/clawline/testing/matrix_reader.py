"""A Matrix user's own client, for tests: what the user receives, read back over the client API.

A :class:`MatrixReader` is a matrix-nio ``AsyncClient`` logged in with a user's access token
(from :meth:`clawline.testing.synapse.Synapse.register`). It creates rooms, invites, joins and
sends text messages (in a thread if asked), and it syncs: every message any sync brought is kept,
so :meth:`MatrixReader.wait_for_message` finds one that arrived before the call as well as one
that is yet to come — it syncs (long-polling the server) until a match is there or the deadline
passes. No encryption: the test rooms are unencrypted.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from nio import (
    AsyncClient,
    AsyncClientConfig,
    ErrorResponse,
    JoinResponse,
    RoomCreateResponse,
    RoomInviteResponse,
    RoomSendResponse,
    SyncResponse,
)

from clawline.errors import Unavailable
from clawline.testing.synapse import MatrixUser

__all__ = ["MatrixReader", "MatrixRequestError", "ReceivedMessage", "matrix_reader"]

T = TypeVar("T")

SYNC_POLL_MS = 1_000
"""The longest one sync waits on the server for something new (a long poll, not a sleep)."""
TIMELINE_LIMIT = 200
"""Events per room per sync: a burst of messages arrives whole, not as a gapped timeline."""
SYNC_FILTER = {"room": {"timeline": {"limit": TIMELINE_LIMIT}}, "presence": {"types": []}}


class MatrixRequestError(Unavailable, AssertionError):
    """The homeserver refused a request of the test's client (the test failed)."""


@dataclass(frozen=True, slots=True)
class ReceivedMessage:
    """An ``m.room.message`` event as the reading user received it."""

    room_id: str
    event_id: str
    sender: str
    body: str
    msgtype: str
    """``m.text``, ``m.notice``, …"""
    thread_root: str | None
    """The thread's root event id when the message is in a thread (``rel_type: m.thread``)."""
    content: Mapping[str, Any] = field(repr=False)
    """The whole event content, for what the fields above leave out (formatting, relations)."""
    origin_server_ts: int = 0


class MatrixReader:
    """One user's client on the test homeserver (use :func:`matrix_reader` to close it)."""

    def __init__(self, homeserver_url: str, user: MatrixUser) -> None:
        self.user = user
        self.client = AsyncClient(
            homeserver_url,
            user.user_id,
            device_id=user.device_id,
            config=AsyncClientConfig(encryption_enabled=False, store_sync_tokens=False),
        )
        self.client.user_id = user.user_id
        self.client.device_id = user.device_id
        self.client.access_token = user.access_token
        self.received: list[ReceivedMessage] = []
        """Every message a sync brought, in the order the syncs brought them."""
        self.invites: list[str] = []
        """Ids of the rooms this user was invited to, as the syncs reported them."""
        self.gapped: set[str] = set()
        """Rooms where a sync's timeline was cut (``limited``): more than :data:`TIMELINE_LIMIT`
        events came since the last sync (or before the first) and the older ones were not read."""
        self._sync_lock = asyncio.Lock()

    @property
    def user_id(self) -> str:
        return self.user.user_id

    async def close(self) -> None:
        await self.client.close()  # type: ignore[no-untyped-call]  # nio leaves it unannotated

    async def create_room(self, *, invite: tuple[str, ...] = (), name: str | None = None) -> str:
        """Create a private, unencrypted room, inviting ``invite``; its id."""
        answer = await self.client.room_create(name=name, invite=list(invite))
        return _expect(answer, RoomCreateResponse, "create a room").room_id

    async def invite(self, room_id: str, user_id: str) -> None:
        _expect(await self.client.room_invite(room_id, user_id), RoomInviteResponse, "invite")

    async def join(self, room_id: str) -> None:
        _expect(await self.client.join(room_id), JoinResponse, f"join {room_id}")

    async def send_text(
        self, room_id: str, body: str, *, thread_root: str | None = None, notice: bool = False
    ) -> str:
        """Send a text message (in the thread of ``thread_root`` if given); its event id."""
        content: dict[str, Any] = {"msgtype": "m.notice" if notice else "m.text", "body": body}
        if thread_root is not None:
            content["m.relates_to"] = {
                "rel_type": "m.thread",
                "event_id": thread_root,
                "is_falling_back": True,
                "m.in_reply_to": {"event_id": thread_root},
            }
        answer = await self.client.room_send(room_id, "m.room.message", content)
        return _expect(answer, RoomSendResponse, f"send to {room_id}").event_id

    async def sync_once(self, timeout_ms: int = 0) -> None:
        """One sync: record the messages and invites it brings."""
        async with self._sync_lock:
            answer = await self.client.sync(timeout=timeout_ms, sync_filter=SYNC_FILTER)
            response = _expect(answer, SyncResponse, "sync")
            for room_id, room in response.rooms.join.items():
                if room.timeline.limited:
                    self.gapped.add(room_id)
                for event in room.timeline.events:
                    message = _message(room_id, event.source)
                    if message is not None:
                        self.received.append(message)
            for room_id in response.rooms.invite:
                if room_id not in self.invites:
                    self.invites.append(room_id)

    async def wait_for_message(
        self,
        room_id: str,
        predicate: Callable[[ReceivedMessage], bool] = lambda _: True,
        timeout: float = 10.0,
    ) -> ReceivedMessage:
        """The first message in ``room_id`` (received so far or yet to come) that matches."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for message in self.received:
                if message.room_id == room_id and predicate(message):
                    return message
            left = deadline - loop.time()
            if left <= 0:
                seen = [m.body for m in self.received if m.room_id == room_id]
                raise AssertionError(
                    f"{self.user_id} received no matching message in {room_id} within "
                    f"{timeout} s; it received {seen!r}"
                    + (" (its timeline there has a gap)" if room_id in self.gapped else "")
                )
            await self.sync_once(min(SYNC_POLL_MS, max(1, int(left * 1000))))

    async def wait_for_invite(self, room_id: str | None = None, timeout: float = 10.0) -> str:
        """The id of a room this user is invited to (``room_id``, or any)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for invited in self.invites:
                if room_id is None or invited == room_id:
                    return invited
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"{self.user_id} got no invite within {timeout} s")
            await self.sync_once(min(SYNC_POLL_MS, max(1, int(left * 1000))))

    def messages(self, room_id: str) -> list[ReceivedMessage]:
        """The messages received in ``room_id`` so far (no sync)."""
        return [m for m in self.received if m.room_id == room_id]


@contextlib.asynccontextmanager
async def matrix_reader(homeserver_url: str, user: MatrixUser) -> AsyncIterator[MatrixReader]:
    """A :class:`MatrixReader` for ``user``, closed on exit."""
    reader = MatrixReader(homeserver_url, user)
    try:
        yield reader
    finally:
        await reader.close()


def _message(room_id: str, source: Mapping[str, Any]) -> ReceivedMessage | None:
    if source.get("type") != "m.room.message":
        return None
    content = source.get("content") or {}
    body = content.get("body")
    if not isinstance(body, str):
        return None  # redacted, or not a message with text
    relation = content.get("m.relates_to") or {}
    root = relation.get("event_id") if relation.get("rel_type") == "m.thread" else None
    return ReceivedMessage(
        room_id=room_id,
        event_id=str(source.get("event_id")),
        sender=str(source.get("sender")),
        body=body,
        msgtype=str(content.get("msgtype", "")),
        thread_root=root if isinstance(root, str) else None,
        content=content,
        origin_server_ts=int(source.get("origin_server_ts", 0)),
    )


def _expect(answer: object, kind: type[T], what: str) -> T:
    if isinstance(answer, kind):
        return answer
    if isinstance(answer, ErrorResponse):
        raise MatrixRequestError(f"could not {what}: {answer.status_code} {answer.message}")
    raise MatrixRequestError(f"could not {what}: {answer!r}")
