"""Channel adapters for tests and plugin authors: one with threads, one without.

:class:`FakeChannel` is configurable (capabilities, default placement, whether it registers a
``subagent_spawning`` hook and what the hook answers) and records what it was asked.
Outbound, :meth:`FakeChannel.send` records every message it accepted in :attr:`FakeChannel.sent`
and raises, in order, the errors of :meth:`FakeChannel.fail_next` first (a
:class:`~clawline.channels.base.DeliveryFailed` to retry, a
:class:`~clawline.channels.base.TargetGone` to give up).
:func:`threads_channel` and :func:`plain_channel` are the two usual shapes::

    runtime.channels.register(threads_channel("forum"))
    runtime.channels.register(plain_channel("sms"))
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from clawline.channels.base import (
    BindingCapabilities,
    ChannelAdapter,
    ChannelFeatures,
    ConversationRef,
    Placement,
    SpawningResult,
    SubagentEnded,
    SubagentSpawning,
)
from clawline.channels.thread_bindings.planning import spawning_from_plan

if TYPE_CHECKING:
    from clawline.records.outbox import OutboxItem

__all__ = [
    "CreatedThread",
    "FakeChannel",
    "HookScript",
    "SentMessage",
    "plain_channel",
    "threads_channel",
]

HookScript: TypeAlias = Callable[[SubagentSpawning], Awaitable[SpawningResult | None]]
"""Replaces the hook's planning: return a result (or ``None``), or raise."""


@dataclass(frozen=True, slots=True)
class CreatedThread:
    account_id: str
    parent: ConversationRef
    conversation_id: str
    session_key: str
    label: str | None


@dataclass(frozen=True, slots=True)
class SentMessage:
    """A message :meth:`FakeChannel.send` accepted."""

    outbox_id: int | None
    account_id: str
    to: str
    thread_id: str | None
    text: str
    remote_id: str


class FakeChannel(ChannelAdapter):
    """A channel adapter whose answers are set by the test.

    Child threads get ids ``<parent>/thread-<n>``. ``create_error`` makes thread creation
    raise it; ``hook`` replaces the ``subagent_spawning`` planning; ``unavailable_accounts``
    report ``adapterAvailable: false``.
    """

    def __init__(
        self,
        channel_id: str,
        *,
        adapter_available: bool = True,
        bind_supported: bool = True,
        placements: tuple[Placement, ...] = ("current", "child"),
        default_placement: Placement = "child",
        spawning_hook: bool = True,
        hook: HookScript | None = None,
        create_error: Exception | None = None,
        unavailable_accounts: tuple[str, ...] = (),
        features: ChannelFeatures | None = None,
    ) -> None:
        self.id = channel_id
        if features is not None:
            self.features = features
        self.default_placement = default_placement
        self.adapter_available = adapter_available
        self.bind_supported = bind_supported
        self.placements = placements
        self.spawning_hook = spawning_hook
        self.hook = hook
        self.create_error = create_error
        self.unavailable_accounts = unavailable_accounts
        self.created: list[CreatedThread] = []
        self.spawning_events: list[SubagentSpawning] = []
        self.ended: list[SubagentEnded] = []
        self.sent: list[SentMessage] = []
        self.attempts = 0
        """Calls of :meth:`send`, failed ones included."""
        self._failures: list[Exception] = []
        self._held: dict[str, asyncio.Event] = {}

    def capabilities(self, account_id: str) -> BindingCapabilities:
        available = self.adapter_available and account_id not in self.unavailable_accounts
        if not available:
            return BindingCapabilities(adapter_available=False, bind_supported=False)
        return BindingCapabilities(
            adapter_available=True, bind_supported=self.bind_supported, placements=self.placements
        )

    async def create_child_conversation(
        self, account_id: str, parent: ConversationRef, *, session_key: str, label: str | None
    ) -> ConversationRef:
        if self.create_error is not None:
            raise self.create_error
        conversation = f"{parent.conversation_id}/thread-{len(self.created) + 1}"
        self.created.append(CreatedThread(account_id, parent, conversation, session_key, label))
        return ConversationRef(conversation, parent_conversation_id=parent.conversation_id)

    @property
    def has_subagent_spawning_hook(self) -> bool:
        return self.spawning_hook

    async def subagent_spawning(self, event: SubagentSpawning) -> SpawningResult | None:
        self.spawning_events.append(event)
        if self.hook is not None:
            return await self.hook(event)
        return await spawning_from_plan(self, event)

    def subagent_ended(self, event: SubagentEnded) -> None:
        self.ended.append(event)

    def hold(self, to: str) -> asyncio.Event:
        """Keep every :meth:`send` to conversation ``to`` waiting (after counting its attempt)
        until the returned event is set: a slow conversation."""
        gate = self._held.setdefault(to, asyncio.Event())
        return gate

    def fail_next(self, errors: Iterable[Exception]) -> None:
        """Raise these from the next calls of :meth:`send`, one each, before accepting again."""
        self._failures.extend(errors)

    async def send(self, item: OutboxItem) -> str | None:
        self.attempts += 1
        gate = self._held.get(item.target.to)
        if gate is not None:
            await gate.wait()
        if self._failures:
            raise self._failures.pop(0)
        remote_id = f"{self.id}-msg-{len(self.sent) + 1}"
        target = item.target
        self.sent.append(
            SentMessage(
                item.id, target.account_id, target.to, target.thread_id, item.text, remote_id
            )
        )
        return remote_id


def threads_channel(channel_id: str = "threads", **options: Any) -> FakeChannel:
    """A channel with threads: ``current`` and ``child`` placements, ``child`` by default, and
    a ``subagent_spawning`` hook."""
    return FakeChannel(channel_id, **options)


def plain_channel(channel_id: str = "plain") -> FakeChannel:
    """A channel without thread support: no binding adapter, no hook."""
    return FakeChannel(
        channel_id,
        adapter_available=False,
        bind_supported=False,
        placements=(),
        default_placement="current",
        spawning_hook=False,
    )
