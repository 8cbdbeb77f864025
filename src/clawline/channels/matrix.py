"""The ``matrix`` channel: one bot account on a Matrix homeserver, through matrix-nio (the
``matrix`` extra) — a channel with threads (docs/channels.md, "Matrix").

- **lifecycle**: :meth:`MatrixChannel.start` spawns the sync loop in the runtime's background
  task group. The loop logs in (a password login; an access token needs none); on the very
  first start it makes one sync whose events it skips — the rooms' history, and the invites
  waiting, which it joins — then long-polls the homeserver (``syncTimeoutMs``) for what is new.
  After each sync whose events were all received it saves the sync token in the store
  (:meth:`~clawline.channels.inbox.ChannelInbox.save_position`), and a later start reads on
  from it: what was said while the gateway was down is answered, what it reads twice runs
  once (the event id is the run's idempotency key). :meth:`MatrixChannel.aclose`
  closes the client once the runtime's stop has cancelled the loop.
- **inbound**: every new ``m.room.message`` of ``msgtype`` ``m.text`` from someone else (edits
  and the bot's own messages are skipped) becomes an
  :class:`~clawline.channels.base.InboundMessage`: ``to`` is the room, ``sender`` the user,
  ``message_id`` the event id, ``chat`` ``direct`` in a room of two joined members and
  ``group`` otherwise, ``thread_id`` the thread's root event in a Matrix thread
  (``m.relates_to.rel_type = m.thread``). Invites are joined when ``autoJoin`` is on.
  Encrypted rooms are out of scope: an ``m.room.encrypted`` event is skipped, with one log line
  per room.
- **outbound**: :meth:`MatrixChannel.send` sends ``m.room.message`` ``m.text`` (in the thread
  when the target has one) with the transaction id ``clawline-outbox-<id>``
  (``clawline-outbox-<id>-<n>`` for the parts of a split message). The homeserver drops a
  transaction id it has seen from the same device and answers the first event id again, so a
  resend after a crash is not a second message. ``M_FORBIDDEN`` (not in the room, kicked,
  banned), ``M_NOT_FOUND``, ``M_UNKNOWN_ROOM`` and the other 4xx refusals give the message up
  (:class:`~clawline.channels.base.TargetGone`); ``M_LIMIT_EXCEEDED`` (after its
  ``retry_after_ms``), 5xx answers and network errors are tried again
  (:class:`~clawline.channels.base.DeliveryFailed`).
- **threads**: binding is supported with the ``current`` and ``child`` placements, ``child`` by
  default; a child conversation is a thread whose root message the bot posts in the room
  (``🧵 <label or session key>``), and its id is the root's event id.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import aiohttp
from nio import (
    AsyncClient,
    AsyncClientConfig,
    ErrorResponse,
    JoinedRoomsResponse,
    JoinResponse,
    LoginResponse,
    RoomSendResponse,
    SyncResponse,
)

from clawline.channels.base import (
    UNAVAILABLE,
    BindingCapabilities,
    ChannelAdapter,
    ChannelFeatures,
    ChannelStatus,
    ConversationRef,
    DeliveryFailed,
    InboundMessage,
    SpawningResult,
    SubagentSpawning,
    TargetGone,
    split_message,
)
from clawline.channels.thread_bindings.planning import spawning_from_plan
from clawline.config import DEFAULT_ACCOUNT_ID
from clawline.errors import Unavailable
from clawline.failure_log import log_failure

if TYPE_CHECKING:
    from clawline.background import Background
    from clawline.channels.inbox import ChannelInbox
    from clawline.config import MatrixChannelConfig
    from clawline.records.outbox import OutboxItem

MATRIX = "matrix"
MESSAGE_LIMIT = 30_000
"""The longest outbound message in characters; longer replies are split (Matrix's own limit is
64 KiB per event, JSON included)."""
TIMELINE_LIMIT = 100
"""Events per room per sync."""
RETRY_FIRST_S = 1.0
RETRY_MAX_S = 60.0
"""The wait after a failed sync: doubling from the first to the most."""
GONE_ERRCODES = frozenset({"M_FORBIDDEN", "M_NOT_FOUND", "M_UNKNOWN_ROOM"})
FIRST_SYNC_FILTER = {"room": {"timeline": {"limit": 1}}, "presence": {"types": []}}
SYNC_FILTER = {"room": {"timeline": {"limit": TIMELINE_LIMIT}}, "presence": {"types": []}}
NETWORK_ERRORS = (aiohttp.ClientError, TimeoutError, OSError)

log = logging.getLogger("clawline.channels.matrix")


class MatrixLoginFailed(Unavailable):
    """The bot could not log in (no credentials, or the homeserver refused them)."""


def _describe(answer: ErrorResponse) -> str:
    errcode = answer.status_code or "error"
    return f"{errcode}: {answer.message}" if answer.message else errcode


def _http_status(answer: object) -> int | None:
    transport = getattr(answer, "transport_response", None)
    status = getattr(transport, "status", None)
    return status if isinstance(status, int) else None


def _thread_root(content: Mapping[str, Any]) -> str | None:
    relation = content.get("m.relates_to")
    if not isinstance(relation, Mapping) or relation.get("rel_type") != "m.thread":
        return None
    root = relation.get("event_id")
    return root if isinstance(root, str) and root else None


class MatrixChannel(ChannelAdapter):
    """The Matrix channel adapter (module docstring)."""

    id = MATRIX
    default_placement = "child"
    features = ChannelFeatures(max_message_length=MESSAGE_LIMIT, formatting="plain")

    def __init__(
        self, config: MatrixChannelConfig, *, env: Mapping[str, str] | None = None
    ) -> None:
        environment = os.environ if env is None else env
        self.account_id = config.default_account or DEFAULT_ACCOUNT_ID
        self.user_id = config.user_id
        self._auto_join = config.auto_join
        self._sync_timeout_ms = config.sync_timeout_ms
        self._password = config.login_password(environment)
        token = config.token(environment)
        self._client = AsyncClient(
            config.homeserver,
            config.user_id,
            device_id=config.device_id,
            # Errors come back at once: the outbox and the sync loop own the retries.
            config=AsyncClientConfig(
                encryption_enabled=False,
                store_sync_tokens=False,
                max_limit_exceeded=0,
                max_timeouts=0,
            ),
        )
        if token is not None:
            self._client.access_token = token
            self._client.user_id = config.user_id
            if config.device_id:
                self._client.device_id = config.device_id
        self._login_lock = asyncio.Lock()
        self._inbox: ChannelInbox | None = None
        self._encrypted_rooms: set[str] = set()
        self._joined: set[str] = set()
        """The rooms the bot is in, as the syncs told."""
        self.synced = False
        self._connected = False
        self._last_event_at: int | None = None
        """Whether the first sync is done: from then on every new message is received."""

    # --- threads --------------------------------------------------------------------------------

    def capabilities(self, account_id: str) -> BindingCapabilities:
        if account_id != self.account_id:
            return UNAVAILABLE
        return BindingCapabilities(
            adapter_available=True, bind_supported=True, placements=("current", "child")
        )

    async def create_child_conversation(
        self, account_id: str, parent: ConversationRef, *, session_key: str, label: str | None
    ) -> ConversationRef:
        """Post the thread's root message in the room; the thread is named by its event id."""
        room_id = parent.parent_conversation_id or parent.conversation_id
        content = {"msgtype": "m.text", "body": f"🧵 {label or session_key}"}
        root = await self._send_event(room_id, content, tx_id=None)
        return ConversationRef(root, parent_conversation_id=room_id)

    @property
    def has_subagent_spawning_hook(self) -> bool:
        return True

    async def subagent_spawning(self, event: SubagentSpawning) -> SpawningResult | None:
        return await spawning_from_plan(self, event)

    # --- lifecycle ------------------------------------------------------------------------------

    async def start(self, inbox: ChannelInbox, background: Background) -> None:
        self._inbox = inbox
        background.spawn(self._sync_forever(), name="matrix sync")

    async def aclose(self) -> None:
        await self._client.close()  # type: ignore[no-untyped-call]  # nio leaves it unannotated

    async def _login(self) -> None:
        """Log in with the password unless the client has an access token already."""
        async with self._login_lock:
            if self._client.access_token:
                return
            if not self._password:
                raise MatrixLoginFailed(
                    "channels.matrix: no access token and no password (check the *Env variables)"
                )
            answer = await self._client.login(password=self._password, device_name="clawline")
            if not isinstance(answer, LoginResponse):
                raise MatrixLoginFailed(f"matrix login as {self.user_id} failed: {answer}")
            log.info("matrix: logged in as %s (device %s)", self.user_id, answer.device_id)

    async def _sync_forever(self) -> None:
        wait = RETRY_FIRST_S
        while True:
            try:
                await self._login()
                if not self.synced:
                    await self._first_sync()
                    self.synced = True
                    log.info("matrix: %s is receiving", self.user_id)
                self._connected = True
                await self._sync_once()
                wait = RETRY_FIRST_S
            except asyncio.CancelledError:
                self._connected = False
                raise
            except MatrixLoginFailed as error:
                self._connected = False
                log.error("%s; the matrix channel receives nothing", error)
                return
            except Exception as error:
                self._connected = False
                log_failure(log, error, f"matrix sync failed; trying again in {wait:g} s")
                await asyncio.sleep(wait)
                wait = min(wait * 2, RETRY_MAX_S)

    async def _sync(self, timeout_ms: int, sync_filter: dict[str, Any]) -> SyncResponse:
        answer = await self._client.sync(timeout=timeout_ms, sync_filter=sync_filter)
        if not isinstance(answer, SyncResponse):
            if isinstance(answer, ErrorResponse) and answer.status_code == "M_UNKNOWN_TOKEN":
                raise MatrixLoginFailed(f"matrix sync as {self.user_id}: {_describe(answer)}")
            raise Unavailable(f"matrix sync: {answer}")
        return answer

    async def _first_sync(self) -> None:
        """Read on from where the last run of the gateway stopped reading (the saved sync
        token); without one, skip the history and join the invites waiting."""
        saved = await self._inbox.position(self.id, self.account_id) if self._inbox else None
        if saved is not None:
            rooms = await self._client.joined_rooms()
            if not isinstance(rooms, JoinedRoomsResponse):
                raise Unavailable(f"matrix joined rooms: {rooms}")
            self._joined.update(rooms.rooms)
            self._client.next_batch = saved
            log.info("matrix: reading on from the last position saved")
            return
        answer = await self._sync(0, FIRST_SYNC_FILTER)
        self._joined.update(answer.rooms.join)
        await self._join_invites(answer)
        await self._save_position(answer)

    async def _save_position(self, answer: SyncResponse) -> None:
        if self._inbox is not None and answer.next_batch:
            await self._inbox.save_position(self.id, self.account_id, answer.next_batch)

    async def _sync_once(self) -> None:
        answer = await self._sync(self._sync_timeout_ms, SYNC_FILTER)
        await self._join_invites(answer)
        for room_id in answer.rooms.leave:
            self._joined.discard(room_id)
        for room_id, room in answer.rooms.join.items():
            sources = [event.source for event in room.timeline.events]
            if room_id not in self._joined:
                # Newly joined: what was said before the bot came in is history.
                self._joined.add(room_id)
                sources = sources[self._after_own_join(sources) :]
            elif room.timeline.limited:
                log.warning("matrix: %s had more new events than one sync reads", room_id)
            for source in sources:
                await self._on_event(room_id, source)
        await self._save_position(answer)  # all of it received: a restart reads on from here

    def _after_own_join(self, sources: list[Mapping[str, Any]]) -> int:
        """The index after the bot's own join in a newly joined room's timeline (0: none)."""
        for index in range(len(sources) - 1, -1, -1):
            source = sources[index]
            content = source.get("content")
            if (
                source.get("type") == "m.room.member"
                and source.get("state_key") == self.user_id
                and isinstance(content, Mapping)
                and content.get("membership") == "join"
            ):
                return index + 1
        return 0

    async def _join_invites(self, answer: SyncResponse) -> None:
        if not self._auto_join:
            return
        for room_id in answer.rooms.invite:
            joined = await self._client.join(room_id)
            if isinstance(joined, JoinResponse):
                log.info("matrix: joined %s", room_id)
            else:
                log.warning("matrix: could not join %s: %s", room_id, joined)

    async def _on_event(self, room_id: str, source: Mapping[str, Any]) -> None:
        kind = source.get("type")
        if kind == "m.room.encrypted":
            if room_id not in self._encrypted_rooms:
                self._encrypted_rooms.add(room_id)
                log.warning(
                    "matrix: skipping encrypted events in %s (end-to-end encryption is not "
                    "supported)",
                    room_id,
                )
            return
        message = self._inbound(room_id, source) if kind == "m.room.message" else None
        if message is None or self._inbox is None:
            return
        self._last_event_at = time.time_ns() // 1_000_000
        try:
            if await self._command(message):
                return
            await self._inbox.receive(message)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log_failure(log, error, f"matrix: message {message.message_id} in {room_id} failed")

    def status(self) -> ChannelStatus:
        return ChannelStatus(connected=self._connected, last_event_at=self._last_event_at)

    async def _command(self, message: InboundMessage) -> bool:
        """Answer ``/focus``, ``/unfocus`` or ``/subagents`` (the channel commands) in the room
        or thread it was written in; whether the message was one."""
        commands = self._inbox.commands if self._inbox is not None else None
        text = message.text.strip()
        if commands is None or not text.startswith("/"):
            return False
        head, _, argument = text.partition(" ")
        name = head[1:]
        if not commands.knows(name):
            return False
        answer = await commands.run(message, name, argument.strip())
        content: dict[str, Any] = {"msgtype": "m.notice", "body": answer}
        if message.thread_id:
            content["m.relates_to"] = _thread_relation(message.thread_id)
        # the command's event id as the transaction id: a command seen twice is answered once
        await self._send_event(message.to, content, tx_id=f"clawline-cmd-{message.message_id}")
        return True

    def _inbound(self, room_id: str, source: Mapping[str, Any]) -> InboundMessage | None:
        sender, event_id = source.get("sender"), source.get("event_id")
        content = source.get("content")
        if not isinstance(sender, str) or not isinstance(event_id, str) or sender == self.user_id:
            return None
        if not isinstance(content, Mapping) or content.get("msgtype") != "m.text":
            return None
        body = content.get("body")
        relation = content.get("m.relates_to")
        if not isinstance(body, str) or not body.strip():
            return None
        if isinstance(relation, Mapping) and relation.get("rel_type") == "m.replace":
            return None  # an edit of an earlier message
        return InboundMessage(
            channel=MATRIX,
            account_id=self.account_id,
            to=room_id,
            sender=sender,
            text=body,
            message_id=event_id,
            chat=self._chat(room_id),
            thread_id=_thread_root(content),
        )

    def _chat(self, room_id: str) -> Literal["direct", "group"]:
        room = self._client.rooms.get(room_id)
        return "direct" if room is not None and room.joined_count == 2 else "group"

    # --- outbound -------------------------------------------------------------------------------

    async def send(self, item: OutboxItem) -> str | None:
        target = item.target
        if target.account_id != self.account_id:
            raise TargetGone(f"matrix has no account {target.account_id!r}")
        parts = split_message(item.text, self.features.max_message_length)
        first: str | None = None
        for number, part in enumerate(parts, start=1):
            content: dict[str, Any] = {"msgtype": "m.text", "body": part}
            if target.thread_id:
                content["m.relates_to"] = _thread_relation(target.thread_id)
            tx_id = f"clawline-outbox-{item.id}" + (f"-{number}" if len(parts) > 1 else "")
            event_id = await self._send_event(target.to, content, tx_id=tx_id)
            first = first or event_id
        return first

    async def _send_event(self, room_id: str, content: dict[str, Any], *, tx_id: str | None) -> str:
        try:
            await self._login()
            answer = await self._client.room_send(room_id, "m.room.message", content, tx_id=tx_id)
        except MatrixLoginFailed as error:
            raise DeliveryFailed(str(error)) from error
        except NETWORK_ERRORS as error:
            raise DeliveryFailed(f"matrix send failed: {type(error).__name__}") from error
        if isinstance(answer, RoomSendResponse):
            return answer.event_id
        reason = f"matrix refused the message to {room_id}: {_describe(answer)}"
        status = _http_status(answer)
        if answer.status_code == "M_LIMIT_EXCEEDED" or status == 429:
            after = answer.retry_after_ms
            raise DeliveryFailed(reason, retry_after_s=after / 1000 if after else None)
        if answer.status_code in GONE_ERRCODES:
            raise TargetGone(reason)
        if status is not None and 400 <= status < 500 and answer.status_code != "M_UNKNOWN_TOKEN":
            raise TargetGone(reason)
        raise DeliveryFailed(reason)


def _thread_relation(root: str) -> dict[str, Any]:
    """``m.relates_to`` of a message in the thread of ``root`` (with the reply fallback)."""
    return {
        "rel_type": "m.thread",
        "event_id": root,
        "is_falling_back": True,
        "m.in_reply_to": {"event_id": root},
    }
