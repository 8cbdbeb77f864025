"""Channel commands: ``/focus``, ``/unfocus`` and ``/subagents`` typed in a chat, room or thread
(docs/channels.md, "Channel commands"), for every channel adapter alike.

An adapter recognises a command in its own syntax (Telegram: ``/focus@bot label``) and calls
:meth:`ChannelCommands.run` with the message it came in, the command's name and its argument;
the answer is the text to post back in that conversation. The conversation is the message's
thread, else its chat, as in inbound routing (:mod:`clawline.channels.inbox`).

- ``/focus <label>`` binds the conversation to the session with that label (or that key): from
  then on its messages go to that session and that session's replies come back here. A binding
  already there is replaced (the old one ends with reason ``focus``).
- ``/unfocus`` ends the conversation's binding (reason ``unfocus``, ``subagent_ended`` fired).
- ``/subagents`` lists the sub-agents (the lineage children) of the conversation's session:
  the bound one, else the conversation's own.

``runtime.inbox.commands`` is the runtime's instance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clawline.channels.inbox import conversation_key
from clawline.channels.thread_bindings.planner import ThreadPlan, bind_thread
from clawline.errors import ClawlineError

if TYPE_CHECKING:
    from clawline.channels.base import InboundMessage
    from clawline.channels.thread_bindings.living import ThreadBindings
    from clawline.clock import Clock
    from clawline.config import ClawlineConfig, ThreadBindingsConfig
    from clawline.records.collab import ThreadBinding
    from clawline.records.session import SessionEntry
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

COMMANDS = ("focus", "unfocus", "subagents")
"""The command names :meth:`ChannelCommands.run` knows."""
MAX_LISTED = 20
"""The most sub-agents ``/subagents`` lists."""


def _name(entry: SessionEntry) -> str:
    return f"{entry.label} ({entry.key})" if entry.label else entry.key


def _focus_blocking(
    store: Store, plan: ThreadPlan, session_key: str, now: int
) -> ThreadBinding | None:
    """Replace the conversation's active binding (if any) by one to ``session_key``, in one
    transaction; the binding that ended."""
    with store.transaction() as tx:
        current = tx.bindings.get_active(plan.channel, plan.account_id, plan.conversation_id)
        ended = None
        if current is not None and current.id is not None:
            if current.session_key == session_key:
                return None
            ended = tx.bindings.unbind(current.id, now, "focus")
        bind_thread(store, plan, session_key, now, tx=tx)
        return ended


class ChannelCommands:
    """The channel commands of a gateway (module docstring)."""

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        bindings: ThreadBindings,
        binding_config: ThreadBindingsConfig,
        config: ClawlineConfig,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._clock = clock
        self._bindings = bindings
        self._binding_config = binding_config
        self._config = config

    @staticmethod
    def knows(name: str) -> bool:
        return name.strip().lower() in COMMANDS

    async def run(self, message: InboundMessage, name: str, argument: str = "") -> str:
        """Run command ``name`` (without its ``/``) for the conversation ``message`` came in;
        the answer to post there. An unknown command answers what there is."""
        command = name.strip().lower()
        try:
            if command == "focus":
                return await self.focus(message, argument.strip())
            if command == "unfocus":
                return await self.unfocus(message)
            if command == "subagents":
                return await self.subagents(message)
        except ClawlineError as error:
            return f"/{command} failed: {error}"
        return f"Unknown command /{command}. Commands: " + ", ".join(f"/{c}" for c in COMMANDS)

    def _conversation(self, message: InboundMessage) -> tuple[str, str, str]:
        channel = message.channel.strip().lower()
        return channel, message.account_id, message.thread_id or message.to

    async def _find(self, target: str) -> SessionEntry | str:
        by_key = await self._workers.run(self._catalog.get, target)
        if by_key is not None:
            return by_key
        found = await self._workers.run(self._catalog.by_label, target)
        if not found:
            return f"No session is labelled {target!r}."
        if len(found) > 1:
            listed = ", ".join(entry.key for entry in found[:5])
            return f"Several sessions are labelled {target!r}: {listed}. Use the session key."
        return found[0]

    async def focus(self, message: InboundMessage, target: str) -> str:
        """``/focus <label>``: bind the conversation to the session with that label or key."""
        if not target:
            return "Usage: /focus <session label or key>"
        found = await self._find(target)
        if isinstance(found, str):
            return found
        channel, account, conversation = self._conversation(message)
        settings = self._binding_config.resolve(channel, account)
        if not settings.enabled:
            return f"Thread bindings are disabled for {channel}."
        plan = ThreadPlan(
            channel=channel,
            account_id=settings.account_id,
            conversation_id=conversation,
            placement="current",
            idle_ms=settings.idle_ms,
            max_age_ms=settings.max_age_ms,
            kind="subagent",
            parent_conversation_id=message.to if message.thread_id else None,
        )
        ended = await self._workers.run(
            _focus_blocking, self._store, plan, found.key, self._clock.now_ms()
        )
        if ended is not None:
            await self._bindings.notify_ended([ended], "focus")
        return f"Focused on {_name(found)}: messages here go to that session now."

    async def unfocus(self, message: InboundMessage) -> str:
        """``/unfocus``: end the conversation's binding."""
        channel, account, conversation = self._conversation(message)
        ended = await self._bindings.unbind(
            channel=channel, account_id=account, conversation_id=conversation
        )
        if ended is None:
            return "This conversation is not focused on a session."
        return f"Unfocused: {ended.session_key} no longer answers here."

    async def session_of(self, message: InboundMessage) -> str:
        """The conversation's session: the bound one, else its own (inbound routing's rule,
        without counting as the binding's activity)."""
        channel, account, conversation = self._conversation(message)
        account = account or self._binding_config.default_account(channel)
        bound = await self._workers.run(self._store.bindings.active, channel, account, conversation)
        if bound is not None:
            return bound.session_key
        peer = message.sender if message.chat == "direct" else message.to
        agent = self._config.agent_for(channel, message.account_id, message.chat, peer)
        return self._catalog.canonical(conversation_key(agent, message))

    async def subagents(self, message: InboundMessage) -> str:
        """``/subagents``: the sub-agents of the conversation's session."""
        session_key = await self.session_of(message)
        children = await self._workers.run(self._store.children, session_key)
        if not children:
            return f"{session_key} has no sub-agents."
        lines = [f"Sub-agents of {session_key}:"]
        for entry in children[:MAX_LISTED]:
            lines.append(f"- {_name(entry)}: {entry.status or 'idle'}")
        if len(children) > MAX_LISTED:
            lines.append(f"… and {len(children) - MAX_LISTED} more")
        return "\n".join(lines)
