"""The built-in ``webchat`` channel: clawline's own web UI and operator clients.

A webchat conversation is a session: its conversation id is the session key (the UI shows one
conversation per session). ``current`` placement binds the requester's conversation; ``child``
placement — the default for spawns — opens a new conversation under it, and that conversation is
the child session's own (id = the child's session key, parent = the requester's conversation).
So a thread-bound subagent spawned from the web UI appears there as its own conversation, nested
under its requester, and what the user types in it goes to the child.
"""

from __future__ import annotations

from clawline.channels.base import (
    WEBCHAT,
    BindingCapabilities,
    ChannelAdapter,
    ConversationRef,
    Placement,
    SpawningResult,
    SubagentSpawning,
)
from clawline.channels.thread_bindings.planning import spawning_from_plan


class WebchatAdapter(ChannelAdapter):
    id = WEBCHAT
    default_placement: Placement = "child"

    def capabilities(self, account_id: str) -> BindingCapabilities:
        return BindingCapabilities(
            adapter_available=True, bind_supported=True, placements=("current", "child")
        )

    async def create_child_conversation(
        self, account_id: str, parent: ConversationRef, *, session_key: str, label: str | None
    ) -> ConversationRef:
        return ConversationRef(session_key, parent_conversation_id=parent.conversation_id)

    @property
    def has_subagent_spawning_hook(self) -> bool:
        return True

    async def subagent_spawning(self, event: SubagentSpawning) -> SpawningResult | None:
        return await spawning_from_plan(self, event)
