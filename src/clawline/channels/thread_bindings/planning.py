"""Choosing the conversation a spawn binds, and the exact refusal texts (OpenClaw's,
listed in docs/collaboration.md).

:func:`plan_binding` applies the checks in OpenClaw's order: bindings enabled for the account,
spawns of this kind enabled, an adapter available, the placement supported, a conversation to
bind; then, for ``child`` placement, it asks the adapter to create the thread. Both the ACP
spawn path and the adapters' ``subagent_spawning`` hooks use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from clawline.channels.base import (
    BindingTarget,
    ChannelAdapter,
    ChannelContext,
    SpawningError,
    SpawningOk,
    SpawningResult,
    SubagentSpawning,
)

if TYPE_CHECKING:
    from clawline.config import ThreadBindingSettings

NO_SPAWNING_HOOKS = (
    "thread=true is unavailable because no channel plugin registered subagent_spawning hooks."
)
SUBAGENT_PREPARE_FAILED = "Failed to prepare thread binding for this subagent session."
SUBAGENT_NOT_READY = (
    "Unable to create or bind a thread for this subagent session. "
    "Session mode is unavailable for this target."
)
ACP_NO_CONTEXT = "thread=true for ACP sessions requires a channel context."

RefusalReason: TypeAlias = Literal[
    "disabled", "spawn_disabled", "unavailable", "placement", "no_conversation"
]


def bindings_disabled_text(channel: str) -> str:
    return (
        f"Thread bindings are disabled for {channel} (set channels.{channel}.threadBindings."
        "enabled=true to override for this account, or session.threadBindings.enabled=true "
        "globally)."
    )


def spawn_disabled_text(kind: str, channel: str) -> str:
    flag = "spawnAcpSessions" if kind == "acp" else "spawnSubagentSessions"
    return (
        f"Thread-bound {kind} spawns are disabled for {channel} "
        f"(set channels.{channel}.threadBindings.{flag}=true to enable)."
    )


def unavailable_text(channel: str) -> str:
    return f"Thread bindings are unavailable for {channel}."


def placement_unsupported_text(placement: str, channel: str) -> str:
    return f"Thread bindings do not support {placement} placement for {channel}."


def no_conversation_text(channel: str) -> str:
    return f"Could not resolve a {channel} conversation for ACP thread spawn."


def bind_failed_text(error: BaseException | str) -> str:
    """``Thread bind failed: <msg>`` (an exception's message, else its type name)."""
    message = error if isinstance(error, str) else (str(error) or type(error).__name__)
    return f"Thread bind failed: {message}"


@dataclass(frozen=True, slots=True)
class PlanRefusal:
    reason: RefusalReason
    error: str


async def plan_binding(
    adapter: ChannelAdapter | None,
    context: ChannelContext,
    settings: ThreadBindingSettings,
    kind: str,
    *,
    session_key: str,
    label: str | None = None,
) -> BindingTarget | PlanRefusal:
    """The conversation ``session_key`` should be bound to, or why not.

    ``adapter`` is the adapter of ``context.channel`` (``None``: no adapter registered).
    Exceptions of :meth:`ChannelAdapter.create_child_conversation` propagate.
    """
    channel = context.channel
    if not settings.enabled:
        return PlanRefusal("disabled", bindings_disabled_text(channel))
    if not settings.spawn_enabled(kind):
        return PlanRefusal("spawn_disabled", spawn_disabled_text(kind, channel))
    if adapter is None:
        return PlanRefusal("unavailable", unavailable_text(channel))
    capabilities = adapter.capabilities(settings.account_id)
    if not capabilities.adapter_available:
        return PlanRefusal("unavailable", unavailable_text(channel))
    placement = adapter.placement_for(context)
    if not capabilities.supports(placement):
        return PlanRefusal("placement", placement_unsupported_text(placement, channel))
    current = adapter.current_conversation(context)
    if current is None:
        return PlanRefusal("no_conversation", no_conversation_text(channel))
    if placement == "child":
        current = await adapter.create_child_conversation(
            settings.account_id, current, session_key=session_key, label=label
        )
    return BindingTarget(
        channel=channel,
        account_id=settings.account_id,
        conversation_id=current.conversation_id,
        placement=placement,
        parent_conversation_id=current.parent_conversation_id,
    )


async def spawning_from_plan(
    adapter: ChannelAdapter, event: SubagentSpawning
) -> SpawningResult | None:
    """A ready-made ``subagent_spawning`` hook body for adapters that bind like clawline's own:
    ``None`` for another channel's requester; the policy refusals as ``{status:"error"}``; a
    conversation that cannot be resolved as not ready."""
    requester = event.requester
    if requester is None or event.settings is None or requester.channel != adapter.id:
        return None
    planned = await plan_binding(
        adapter,
        requester,
        event.settings,
        "subagent",
        session_key=event.child_session_key,
        label=event.label,
    )
    if isinstance(planned, BindingTarget):
        return SpawningOk(thread_binding_ready=True, target=planned)
    if planned.reason == "no_conversation":
        return SpawningOk(thread_binding_ready=False)
    return SpawningError(planned.error)
