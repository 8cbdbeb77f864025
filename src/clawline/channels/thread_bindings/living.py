"""Living thread bindings: routing, completion delivery, unbinding and expiry
(docs/collaboration.md, "Routing, delivery, unbinding, expiry").

:class:`ThreadBindings` (``runtime.thread_bindings``), built with the store, the channel
registry and the parsed ``threadBindings`` settings:

- :meth:`~ThreadBindings.route_inbound`: a message in a bound conversation goes to the bound
  session (and counts as activity); an expired binding found on the way is ended instead.
- :func:`resolve_delivery_target` (the announce dispatcher's rule, on the store thread): where a
  session's completion goes — its bound conversation first, else the requester's origin, a
  channel-only origin completed from the requester's ``lastChannel/lastTo/lastAccountId``.
- :meth:`~ThreadBindings.unbind` (``/unfocus``), :meth:`~ThreadBindings.unbind_session`,
  :meth:`~ThreadBindings.unbind_deleted_session` (``sessions.delete``) and
  :meth:`~ThreadBindings.sweep` (idle / max-age expiry, every :data:`SWEEP_INTERVAL_MS` in
  the runtime's background task group) end bindings and fire ``subagent_ended`` through the
  channels.

Its methods run on the event loop and do their store work on the store workers; the
``*_blocking`` helpers are the store-thread halves, for callers already there.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from clawline import keys
from clawline.channels.base import SubagentEnded
from clawline.channels.thread_bindings.planner import requester_channel_context
from clawline.records.collab import ThreadBinding
from clawline.records.outbox import WEBCHAT_CHANNEL, OutboxTarget
from clawline.types import JSON

if TYPE_CHECKING:
    from clawline.channels.registry import ChannelRegistry
    from clawline.clock import Clock
    from clawline.config import ThreadBindingsConfig
    from clawline.records.session import SessionEntry
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store
    from clawline.store.workers import StoreWorkers

log = logging.getLogger("clawline.channels.thread_bindings.living")

SWEEP_INTERVAL_MS = 60_000
SWEEP_BATCH = 500


def target_kind(session_key: str) -> str:
    """``subagent`` for a subagent session, else ``acp`` (OpenClaw's rule)."""
    return "subagent" if keys.is_subagent_key(session_key) else "acp"


def _account(config: ThreadBindingsConfig, channel: str, account_id: str | None) -> str:
    return (account_id or "").strip() or config.default_account(channel)


# --- inbound routing -------------------------------------------------------------------------


def _route_blocking(
    store: Store, channel: str, account_id: str, conversation_id: str, now: int
) -> tuple[str | None, ThreadBinding | None]:
    with store.transaction() as tx:
        binding = tx.bindings.get_active(channel, account_id, conversation_id)
        if binding is None or binding.id is None:
            return None, None
        expiry = binding.expiry()
        if expiry is not None and expiry[0] <= now:
            return None, tx.bindings.unbind(binding.id, now, expiry[1])
        tx.bindings.touch(binding.id, now)
        return binding.session_key, None


# --- completion delivery ---------------------------------------------------------------------


def _text(value: JSON | None) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value.strip() if isinstance(value, str) and value.strip() else None


def resolve_delivery_target(
    bindings: Sequence[ThreadBinding],
    requester: SessionEntry | None,
    config: ThreadBindingsConfig | None = None,
    requester_origin: Mapping[str, JSON] | None = None,
) -> OutboxTarget | None:
    """Where a session's completion goes, as an outbox target (``None``: nowhere outside the
    web chat, which reads transcripts itself).

    1. The session's bound conversation (``bindings``: its active ones, newest first; the one
       on the origin's channel and account if several, else the newest), in its thread;
    2. else ``requester_origin`` (``{channel, to, accountId, threadId}``); an origin with a
       channel but no ``to`` is completed from the requester's last route on that channel;
    3. else the requester's own channel context (its ``deliveryContext``, else its
       ``lastChannel/lastTo/lastAccountId/lastThreadId``).
    """
    origin = requester_origin or {}
    origin_channel = (_text(origin.get("channel")) or "").lower() or None
    origin_account = _text(origin.get("accountId"))
    if bindings:
        chosen = next(
            (
                binding
                for binding in bindings
                if binding.channel == origin_channel and binding.account_id == origin_account
            ),
            bindings[0],
        )
        return chosen.target()
    context = requester_channel_context(requester, config)
    if origin_channel is None:
        if context is None:
            return _outbox_target(None, None, None, None)
        return _outbox_target(context.channel, context.account_id, context.to, context.thread_id)
    to = _text(origin.get("to"))
    thread = _text(origin.get("threadId"))
    if to is None and context is not None and context.channel == origin_channel:
        # A channel-only origin: complete it from the requester's last route.
        to, thread = context.to, thread or context.thread_id
        origin_account = origin_account or context.account_id
    return _outbox_target(origin_channel, origin_account, to, thread)


def _outbox_target(
    channel: str | None, account_id: str | None, to: str | None, thread_id: str | None
) -> OutboxTarget | None:
    if channel is None or channel == WEBCHAT_CHANNEL or to is None:
        return None
    return OutboxTarget(channel, account_id or "default", to, thread_id)


# --- unbinding -------------------------------------------------------------------------------


def _unbind_conversation(
    store: Store, channel: str, account_id: str, conversation_id: str, now: int, reason: str
) -> ThreadBinding | None:
    with store.transaction() as tx:
        binding = tx.bindings.get_active(channel, account_id, conversation_id)
        if binding is None or binding.id is None:
            return None
        return tx.bindings.unbind(binding.id, now, reason)


def _unbind_session(store: Store, session_key: str, now: int, reason: str) -> list[ThreadBinding]:
    with store.transaction() as tx:
        return tx.bindings.unbind_session(session_key, now, reason)


# --- expiry ----------------------------------------------------------------------------------


def expire_bindings_blocking(
    store: Store, now: int, batch: int = SWEEP_BATCH
) -> list[ThreadBinding]:
    """End (in one transaction) the bindings whose expiry is at or before ``now``, each with
    its reason (``idle-expired`` or ``max-age-expired``); activity recorded since they were
    read is respected."""
    candidates = store.bindings.expiring(now, batch)
    if not candidates:
        return []
    ended: list[ThreadBinding] = []
    with store.transaction() as tx:
        for candidate in candidates:
            current = tx.bindings.get_active(
                candidate.channel, candidate.account_id, candidate.conversation_id
            )
            if current is None or current.id != candidate.id or current.id is None:
                continue
            expiry = current.expiry()
            if expiry is None or expiry[0] > now:
                continue
            done = tx.bindings.unbind(current.id, now, expiry[1])
            if done is not None:
                ended.append(done)
    return ended


# --- the bindings of a gateway ---------------------------------------------------------------


class ThreadBindings:
    """A gateway's thread bindings (module docstring): ``channels`` hear of ended bindings
    (``subagent_ended``), ``config`` gives each channel's default account."""

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        clock: Clock,
        channels: ChannelRegistry,
        config: ThreadBindingsConfig,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._clock = clock
        self._channels = channels
        self._config = config

    async def notify_ended(
        self,
        ended: Iterable[ThreadBinding],
        reason: str,
        *,
        outcome: str | None = None,
        always_for: str | None = None,
    ) -> None:
        """Fire one ``subagent_ended`` per session among ``ended`` (and for ``always_for`` even
        when it had no binding)."""
        by_session: dict[str, list[ThreadBinding]] = {}
        if always_for is not None:
            by_session[always_for] = []
        for binding in ended:
            by_session.setdefault(binding.session_key, []).append(binding)
        for session_key, bindings in by_session.items():
            event = SubagentEnded(
                target_session_key=session_key,
                target_kind=target_kind(session_key),
                reason=reason,
                send_farewell=True,
                account_id=bindings[0].account_id if bindings else None,
                outcome=outcome,
                bindings=tuple(bindings),
            )
            await self._channels.fire_subagent_ended(event)

    # --- inbound routing ---------------------------------------------------------------------

    async def route_inbound(
        self, channel: str, account_id: str | None, conversation_id: str
    ) -> str | None:
        """The session bound to this conversation (its ``lastActivityAt`` set to now), or
        ``None`` when none is — the caller then routes as usual. ``account_id`` ``None`` means
        the channel's default account."""
        name = channel.strip().lower()
        account = _account(self._config, name, account_id)
        now = self._clock.now_ms()
        session_key, expired = await self._workers.run(
            _route_blocking, self._store, name, account, conversation_id, now
        )
        if expired is not None:
            await self.notify_ended([expired], expired.unbind_reason or "expired")
        return session_key

    # --- unbinding ---------------------------------------------------------------------------

    async def unbind(
        self,
        *,
        channel: str,
        account_id: str | None,
        conversation_id: str,
        reason: str = "unfocus",
    ) -> ThreadBinding | None:
        """End the conversation's binding (``/unfocus``); the binding as ended, or ``None``
        when the conversation was not bound. Fires ``subagent_ended``."""
        name = channel.strip().lower()
        account = _account(self._config, name, account_id)
        ended = await self._workers.run(
            _unbind_conversation,
            self._store,
            name,
            account,
            conversation_id,
            self._clock.now_ms(),
            reason,
        )
        if ended is not None:
            await self.notify_ended([ended], reason)
        return ended

    async def unbind_session(
        self, session_key: str, *, reason: str, outcome: str | None = None
    ) -> list[ThreadBinding]:
        """End every binding of a session (newest first); fires ``subagent_ended`` if any."""
        ended = await self._workers.run(
            _unbind_session, self._store, session_key, self._clock.now_ms(), reason
        )
        await self.notify_ended(ended, reason, outcome=outcome)
        return ended

    async def unbind_deleted_session(
        self, session_key: str, *, deleted: bool, emit_hooks: bool = True
    ) -> list[ThreadBinding]:
        """``sessions.delete``: end the session's bindings (reason ``session-delete``) and,
        unless ``emit_hooks`` is false, fire ``subagent_ended`` (outcome ``deleted``) — also
        without bindings when the session was really ``deleted``, as OpenClaw does."""
        ended = await self._workers.run(
            _unbind_session, self._store, session_key, self._clock.now_ms(), "session-delete"
        )
        if emit_hooks:
            always = session_key if deleted else None
            await self.notify_ended(ended, "session-delete", outcome="deleted", always_for=always)
        return ended

    # --- expiry ------------------------------------------------------------------------------

    async def sweep(
        self, now: int | None = None, *, batch: int = SWEEP_BATCH
    ) -> list[ThreadBinding]:
        """One expiry pass (up to ``batch`` bindings); fires ``subagent_ended`` per session
        with the expiry reason. Returns the ended bindings."""
        at = self._clock.now_ms() if now is None else now
        ended = await self._workers.run(expire_bindings_blocking, self._store, at, batch)
        for reason in ("max-age-expired", "idle-expired"):
            await self.notify_ended(
                [binding for binding in ended if binding.unbind_reason == reason], reason
            )
        return ended
