"""Inbound channel messages: a message in a room, chat or thread becomes a run of the session
routing chooses, and the reply goes back where the message came from.

Routing (docs/channels.md), first that applies:

1. a bound conversation (the thread, else the chat): its bound session
   (:meth:`~clawline.channels.thread_bindings.living.ThreadBindings.route_inbound`, which also
   counts the message as the binding's activity);
2. otherwise the conversation's own session, in OpenClaw's key grammar:
   ``agent:<agentId>:<channel>:direct:<sender>`` for a one-to-one chat,
   ``agent:<agentId>:<channel>:group:<chat>`` for a room or group, with ``:thread:<threadId>``
   inside a thread; the agent is the first matching ``[[bindings]]`` entry, else the default.

An adapter whose channel streams its inbound messages keeps its read position through the inbox
(:meth:`ChannelInbox.position`, :meth:`ChannelInbox.save_position`): a Matrix sync token, so a
gateway started again reads what was said while it was down.

The session remembers the message's origin (``lastChannel``, ``lastTo``, ``lastAccountId``,
``lastThreadId``), and the run is sent with that conversation as its delivery target: its reply is
queued in the channel outbox in the transaction that stores it. The channel's message id is the
run's idempotency key, so a message the channel delivers twice runs once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clawline import keys
from clawline.channels.base import InboundMessage
from clawline.errors import InvalidInput
from clawline.records.outbox import OutboxTarget

if TYPE_CHECKING:
    from clawline.agents.run_manager import RunManager
    from clawline.channels.commands import ChannelCommands
    from clawline.channels.thread_bindings.living import ThreadBindings
    from clawline.clock import Clock
    from clawline.config import ClawlineConfig
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

log = logging.getLogger("clawline.channels.inbox")

MAX_INBOUND_TEXT = 100_000
"""The longest inbound message, in characters (longer ones are refused, not cut)."""


class InboundRefused(InvalidInput):
    """An inbound message is malformed (no conversation, no text, a bad id)."""


@dataclass(frozen=True, slots=True)
class Routed:
    """Where an inbound message went."""

    session_key: str
    run_id: str
    status: str
    """The run manager's answer: ``started``, ``in_flight`` (a repeat), …"""
    bound: bool
    """Routed through a thread binding."""


def _check(message: InboundMessage) -> None:
    for name in ("channel", "account_id", "to", "sender", "message_id"):
        value = getattr(message, name)
        if not isinstance(value, str) or not value.strip() or "\x00" in value:
            raise InboundRefused(f"inbound message: {name} must be a non-empty string")
    if not message.text.strip():
        raise InboundRefused("inbound message: text must not be empty")
    if len(message.text) > MAX_INBOUND_TEXT:
        raise InboundRefused(f"inbound message: text longer than {MAX_INBOUND_TEXT} characters")


def conversation_key(agent_id: str, message: InboundMessage) -> str:
    """The conversation's own session key (module docstring, rule 2)."""
    peer = message.sender if message.chat == "direct" else message.to
    base = f"agent:{agent_id}:{message.channel}:{message.chat}:{peer}"
    if message.thread_id:
        return keys.thread_session_key(base, message.thread_id)
    return base


class ChannelInbox:
    """Receives inbound messages for every channel adapter (``runtime.inbox``)."""

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        runs: RunManager,
        bindings: ThreadBindings,
        config: ClawlineConfig,
        commands: ChannelCommands | None = None,
    ) -> None:
        self.commands = commands
        """The channel commands (``/focus``, ``/unfocus``, ``/subagents``) adapters run
        (:mod:`clawline.channels.commands`); ``None`` where none are offered."""
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._clock = clock
        self._runs = runs
        self._bindings = bindings
        self._config = config

    async def receive(self, message: InboundMessage) -> Routed:
        """Route ``message`` and start its run; raises :class:`InboundRefused` for a malformed
        one (nothing written)."""
        _check(message)
        channel = message.channel.strip().lower()
        conversation = message.thread_id or message.to
        bound_key = await self._bindings.route_inbound(channel, message.account_id, conversation)
        if bound_key is not None:
            session_key = bound_key
        else:
            peer = message.sender if message.chat == "direct" else message.to
            agent = self._config.agent_for(channel, message.account_id, message.chat, peer)
            session_key = self._catalog.canonical(conversation_key(agent, message))
        origin = {
            "lastChannel": channel,
            "lastTo": message.to,
            "lastAccountId": message.account_id,
            "lastThreadId": message.thread_id,
        }
        await self._workers.run(self._catalog.patch, session_key, origin)
        target = OutboxTarget(channel, message.account_id, message.to, message.thread_id)
        ack = await self._runs.send(
            session_key=session_key,
            message=message.text,
            idempotency_key=f"{channel}:{message.account_id}:{message.message_id}",
            deliver=True,
            delivery=target,
        )
        log.debug("inbound %s → %s (%s)", target.describe(), session_key, ack.status)
        return Routed(session_key, ack.run_id, ack.status, bound=bound_key is not None)

    async def position(self, channel: str, account_id: str) -> str | None:
        """Where the account's inbound stream was read to (:meth:`save_position`), ``None``
        before it was first saved."""
        return await self._workers.run(self._store.channel_cursors.get, channel, account_id)

    async def save_position(self, channel: str, account_id: str, position: str) -> None:
        """Keep how far the account's inbound stream was read, once what came before
        ``position`` has been received: the next start reads on from there (what it reads
        twice runs once, by its message ids)."""
        await self._workers.run(self._save_position, channel, account_id, position)

    def _save_position(self, channel: str, account_id: str, position: str) -> None:
        with self._store.transaction() as tx:
            tx.channel_cursors.save(channel, account_id, position, self._clock.now_ms())
