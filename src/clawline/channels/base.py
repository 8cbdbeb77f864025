"""The channel adapter protocol: what a channel tells clawline about conversations and threads.

A *channel* is a surface where people talk to agents (``webchat``, a chat network, …); an
*account* is one identity of clawline on it; a *conversation* is one chat, room or thread there,
named by an id the channel chooses. A thread binding (docs/collaboration.md) ties a conversation
to a session, so messages in it go to that session and the session's output comes back to it.

An adapter declares its binding capabilities ``{adapterAvailable, bindSupported, placements}``
per account and may register a ``subagent_spawning`` hook (:meth:`ChannelAdapter.
subagent_spawning`), which prepares a thread when ``sessions_spawn`` is called with
``thread=true`` (it plans the binding; clawline writes it in the spawn's transaction).

Placements: ``current`` binds the conversation the requester is in; ``child`` first creates a
new conversation (a thread) under it. The *default top-level placement* is the one used when
the requester is not already inside a thread.

Outbound, an adapter declares its :class:`ChannelFeatures` (edits, typing, the longest message,
the formatting it renders) and implements :meth:`ChannelAdapter.send`, which the outbox's
delivery loop (:mod:`clawline.channels.outbox_delivery`) calls once per queued message: it
answers the channel's id of the message, or raises :class:`DeliveryFailed` (try again later,
perhaps after ``retry_after_s``) or :class:`TargetGone` (never again: the room is gone, the bot
was removed).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from clawline.errors import NotFound, Unavailable
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.background import Background
    from clawline.channels.inbox import ChannelInbox
    from clawline.config import ThreadBindingSettings
    from clawline.records.collab import ThreadBinding
    from clawline.records.outbox import OutboxItem

WEBCHAT = "webchat"
"""The built-in channel's id (:mod:`clawline.channels.webchat`); also the channel of a session
that has no channel context of its own (the thread planner's default)."""

Placement: TypeAlias = Literal["current", "child"]
SpawnKind: TypeAlias = Literal["subagent", "acp"]
Formatting: TypeAlias = Literal["plain", "markdown", "html"]


class DeliveryFailed(Unavailable):
    """A message could not be delivered now; the outbox tries again (after ``retry_after_s``
    when the channel said how long to wait, else with its own backoff)."""

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class TargetGone(NotFound):
    """The conversation cannot be reached any more (a room left or deleted, a bot removed):
    the outbox gives up on the message, keeping this reason."""


@dataclass(frozen=True, slots=True)
class ChannelStatus:
    """How a channel is doing, as ``clawline channels status`` shows it."""

    connected: bool | None = None
    """Whether its connection (a sync loop, long polling) is up; ``None`` for a channel that
    keeps none (it is pushed to, or reads transcripts)."""
    last_event_at: int | None = None
    """When it last received something (epoch ms), ``None`` before the first."""


@dataclass(frozen=True, slots=True)
class ChannelFeatures:
    """What a channel can do with outbound messages."""

    edits: bool = False
    """Messages can be edited after they are sent."""
    typing: bool = False
    """A typing indicator can be shown."""
    max_message_length: int | None = None
    """The longest message in characters (``None``: no limit); longer text is split."""
    formatting: Formatting = "plain"
    """What the channel renders: plain text, Markdown or HTML."""


def split_message(text: str, limit: int | None) -> list[str]:
    """``text`` in parts of at most ``limit`` characters, cut at a line break or a space when
    one is near the end of a part (never inside a word that fits a part)."""
    if limit is None or len(text) <= limit:
        return [text]
    parts: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = max(rest.rfind("\n", 0, limit + 1), rest.rfind(" ", 0, limit + 1))
        if cut < limit // 2:
            cut = limit
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        parts.append(rest)
    return parts


@dataclass(frozen=True, slots=True)
class BindingCapabilities:
    adapter_available: bool
    bind_supported: bool
    placements: tuple[Placement, ...] = ()

    def supports(self, placement: str) -> bool:
        return self.adapter_available and self.bind_supported and placement in self.placements

    def to_json(self) -> JSONObject:
        return {
            "adapterAvailable": self.adapter_available,
            "bindSupported": self.bind_supported,
            "placements": list(self.placements),
        }


UNAVAILABLE = BindingCapabilities(adapter_available=False, bind_supported=False)
"""The capabilities of a channel without an adapter."""


@dataclass(frozen=True, slots=True)
class ChannelContext:
    """Where a session talks: OpenClaw's ``deliveryContext {channel, to, accountId, threadId}``.

    ``channel`` is lower-case; ``to`` is the conversation (chat, room) and ``thread_id`` the
    thread inside it, when there is one.
    """

    channel: str
    account_id: str
    to: str | None = None
    thread_id: str | None = None

    def to_json(self) -> JSONObject:
        out: JSONObject = {"channel": self.channel, "accountId": self.account_id}
        if self.to is not None:
            out["to"] = self.to
        if self.thread_id is not None:
            out["threadId"] = self.thread_id
        return out


@dataclass(frozen=True, slots=True)
class ConversationRef:
    conversation_id: str
    parent_conversation_id: str | None = None


@dataclass(frozen=True, slots=True)
class BindingTarget:
    """A conversation ready to be bound (its thread exists) and how it was chosen."""

    channel: str
    account_id: str
    conversation_id: str
    placement: Placement
    parent_conversation_id: str | None = None


@dataclass(frozen=True, slots=True)
class SubagentSpawning:
    """The ``subagent_spawning`` hook's event: a subagent is being spawned with
    ``thread=true``. ``requester`` is ``None`` when the requester has no channel context."""

    child_session_key: str
    requester_session_key: str
    agent_id: str
    label: str | None
    mode: str
    requester: ChannelContext | None
    settings: ThreadBindingSettings | None
    """The thread binding settings of the requester's channel account (``None`` without a
    channel context); a hook needs no config access of its own."""
    thread_requested: bool = True


@dataclass(frozen=True, slots=True)
class SpawningOk:
    """``{status:"ok", threadBindingReady}``; a ready result names the conversation to bind."""

    thread_binding_ready: bool
    target: BindingTarget | None = None
    status: Literal["ok"] = "ok"


@dataclass(frozen=True, slots=True)
class SpawningError:
    """``{status:"error", error}``."""

    error: str
    status: Literal["error"] = "error"


SpawningResult: TypeAlias = SpawningOk | SpawningError


@dataclass(frozen=True, slots=True)
class SubagentEnded:
    """The ``subagent_ended`` notification (OpenClaw's hook) as clawline fires it when a
    session's thread bindings end (session deleted, ``/unfocus``, expiry)."""

    target_session_key: str
    target_kind: str
    """``subagent`` for a subagent session key, else ``acp`` (OpenClaw's rule)."""
    reason: str
    send_farewell: bool = True
    account_id: str | None = None
    run_id: str | None = None
    outcome: str | None = None
    error: str | None = None
    bindings: tuple[ThreadBinding, ...] = ()
    """The bindings that ended with it."""

    def to_json(self) -> JSONObject:
        out: dict[str, JSON] = {
            "targetSessionKey": self.target_session_key,
            "targetKind": self.target_kind,
            "reason": self.reason,
            "sendFarewell": self.send_farewell,
        }
        optional: Mapping[str, str | None] = {
            "accountId": self.account_id,
            "runId": self.run_id,
            "outcome": self.outcome,
            "error": self.error,
        }
        out.update({name: value for name, value in optional.items() if value is not None})
        out["bindings"] = [binding.to_json() for binding in self.bindings]
        return out


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """One message a channel received."""

    channel: str
    account_id: str
    to: str
    """The chat or room it was posted in."""
    sender: str
    """Who wrote it (the channel's user id)."""
    text: str
    message_id: str
    """The channel's id of the message (the run's idempotency key)."""
    chat: Literal["direct", "group"] = "group"
    thread_id: str | None = None


class ChannelAdapter(abc.ABC):
    """A channel as clawline's thread bindings see it.

    Subclasses set :attr:`id` (lower-case) and :attr:`default_placement` and implement
    :meth:`capabilities`. The conversation helpers have generic defaults: the current
    conversation is the thread if the context has one, else ``to``.
    """

    id: str
    default_placement: Placement = "current"
    """The placement used when the requester is not inside a thread."""
    features: ChannelFeatures = ChannelFeatures()
    """What outbound messages can do here (:class:`ChannelFeatures`)."""

    @abc.abstractmethod
    def capabilities(self, account_id: str) -> BindingCapabilities: ...

    def current_conversation(self, context: ChannelContext) -> ConversationRef | None:
        """The conversation the context is in, or ``None`` if it names none."""
        if context.thread_id:
            return ConversationRef(context.thread_id, parent_conversation_id=context.to)
        if context.to:
            return ConversationRef(context.to)
        return None

    def placement_for(self, context: ChannelContext) -> Placement:
        """``current`` inside a thread (bind that thread), else :attr:`default_placement`."""
        return "current" if context.thread_id else self.default_placement

    async def create_child_conversation(
        self, account_id: str, parent: ConversationRef, *, session_key: str, label: str | None
    ) -> ConversationRef:
        """Create a thread under ``parent`` for ``session_key``; raise on failure (the error
        text becomes ``Thread bind failed: <msg>``)."""
        raise NotImplementedError(f"{self.id} cannot create threads")

    async def subagent_spawning(self, event: SubagentSpawning) -> SpawningResult | None:
        """The ``subagent_spawning`` hook: ``None`` when the event is not for this channel.
        Only called when :attr:`has_subagent_spawning_hook` is true."""
        return None

    @property
    def has_subagent_spawning_hook(self) -> bool:
        """Whether this adapter registers a ``subagent_spawning`` hook."""
        return False

    def subagent_ended(self, event: SubagentEnded) -> None:
        """Told when a session's bindings ended (e.g. to post a farewell). Default: nothing."""
        del event

    async def send(self, item: OutboxItem) -> str | None:
        """Deliver one queued message to ``item.target`` (split by :func:`split_message` when
        :attr:`ChannelFeatures.max_message_length` asks for it) and answer the channel's id of
        the (first) message sent. Called once per attempt; an adapter whose channel offers an
        idempotency key uses ``item.id`` for it, so a retry after a crash is not a second
        message. Raise :class:`DeliveryFailed` or :class:`TargetGone`."""
        raise TargetGone(f"{self.id} cannot send messages")

    async def start(self, inbox: ChannelInbox, background: Background) -> None:  # noqa: B027
        """Start receiving: an adapter that pulls its messages (a sync loop, long polling)
        starts that loop here, as a task of ``background`` (``background.spawn(coro,
        name=…)``), and hands every message it receives to ``await inbox.receive(message)``.
        The runtime calls it once, at the end of its start (the plugins started, the outbox's
        delivery loop running); it must not wait on the network — do that inside the task. The
        runtime's stop cancels the task (it closes ``background``) before :meth:`aclose`.
        Default: nothing (an adapter that is pushed to, like the webhook, needs no loop).

        On a store several gateway instances share, only the instance holding the channel's
        connection calls it (:mod:`clawline.channels.connections`); the others call
        :meth:`stand_by` instead, and call this one later if they take the connection over."""

    async def stand_by(self, inbox: ChannelInbox) -> None:  # noqa: B027
        """Receive only what is pushed to this gateway instance (Telegram's webhook POSTs):
        another instance on the same store holds the channel's connection, so start no loop and
        register nothing with the service. Called instead of :meth:`start` (which may follow,
        when this instance takes the connection over). Default: nothing."""

    def status(self) -> ChannelStatus:
        """How the channel is doing (:class:`ChannelStatus`). Default: nothing known."""
        return ChannelStatus()

    async def aclose(self) -> None:  # noqa: B027 - optional, like subagent_ended
        """Release what the adapter holds (connections, a sync loop); the runtime calls it when
        it stops. Default: nothing."""
