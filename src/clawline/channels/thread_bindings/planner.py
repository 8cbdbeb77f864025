"""Thread bindings for ``sessions_spawn`` (docs/collaboration.md, "Thread bindings and channels").

``sessions_spawn`` with ``thread=true`` calls :meth:`ThreadPlanner.prepare_subagent_thread`
(runtime ``subagent``) or :meth:`ThreadPlanner.prepare_acp_thread` (runtime ``acp``) before it
writes anything. The planner is built with the channel registry, the store (through the store
workers) and the parsed ``threadBindings`` settings (:class:`ThreadBindingsConfig`). They
return a :class:`ThreadPlan` — the conversation to bind — or a :class:`ThreadRefusal` with the
exact OpenClaw text. The spawn then writes the binding with :func:`bind_thread` inside its own
transaction (``tx=``), so the child, its run record and its binding commit together.

The requester's channel context (:func:`requester_channel_context`) comes from its session
entry: ``deliveryContext {channel, to, accountId, threadId}``, else
``lastChannel/lastTo/lastAccountId/lastThreadId``, else ``channel``; a session with none of
these is a ``webchat`` conversation whose id is the session key, except cron, hook and node
sessions, which have no channel context. The account defaults to
``channels.<ch>.defaultAccount``, else ``default``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from clawline import keys
from clawline.channels.base import (
    WEBCHAT,
    BindingTarget,
    ChannelContext,
    SpawningError,
    SpawningOk,
    SubagentSpawning,
)
from clawline.channels.thread_bindings.planning import (
    ACP_NO_CONTEXT,
    NO_SPAWNING_HOOKS,
    SUBAGENT_NOT_READY,
    SUBAGENT_PREPARE_FAILED,
    bind_failed_text,
    plan_binding,
)
from clawline.records.collab import ThreadBinding
from clawline.records.session import SessionEntry
from clawline.types import JSON, JSONObject

if TYPE_CHECKING:
    from clawline.channels.registry import ChannelRegistry
    from clawline.config import ThreadBindingsConfig
    from clawline.sessions.catalog import SessionCatalog
    from clawline.store.base import Store, StoreTransaction
    from clawline.store.workers import StoreWorkers

ACP_THREAD_ERROR_CODE = "thread_binding_invalid"
_NO_CHANNEL_KINDS = ("cron", "hook", "node")
_INTERNAL = "internal"


@dataclass(frozen=True, slots=True)
class ThreadPlan:
    """The binding to create when the spawn commits."""

    channel: str
    account_id: str
    conversation_id: str
    placement: str
    """``current`` (the requester's conversation) or ``child`` (a thread created for it)."""
    idle_ms: int
    max_age_ms: int
    kind: Literal["subagent", "acp"]
    parent_conversation_id: str | None = None
    status: Literal["ok"] = "ok"

    def binding(self, session_key: str, now: int) -> ThreadBinding:
        return ThreadBinding(
            channel=self.channel,
            account_id=self.account_id,
            conversation_id=self.conversation_id,
            session_key=session_key,
            placement=self.placement,
            bound_at=now,
            last_activity_at=now,
            idle_ms=self.idle_ms,
            max_age_ms=self.max_age_ms,
            parent_conversation_id=self.parent_conversation_id,
        )

    def delivery_context(self) -> JSONObject:
        """The child's ``deliveryContext``: its output goes to the bound conversation (a
        thread inside its parent conversation when there is one)."""
        target = self.binding("", 0).target()
        context: JSONObject = {"channel": self.channel, "to": target.to}
        context["accountId"] = self.account_id
        if target.thread_id is not None:
            context["threadId"] = target.thread_id
        return context


@dataclass(frozen=True, slots=True)
class ThreadRefusal:
    """A refused thread binding: the spawn returns ``{status, error[, errorCode]}``."""

    error: str
    error_code: str | None = None
    """``thread_binding_invalid`` for ACP refusals; ``None`` for subagents."""
    status: Literal["error"] = "error"


# --- the requester's channel context ---------------------------------------------------------


def _text(value: JSON | None) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def requester_channel_context(
    entry: SessionEntry | None, config: ThreadBindingsConfig | None = None
) -> ChannelContext | None:
    """Where the requester talks, or ``None`` when it has no channel context (see the module
    docstring for the order of the sources)."""
    if entry is None:
        return None
    extra = entry.extra
    raw_delivery = extra.get("deliveryContext")
    delivery: Mapping[str, JSON] = raw_delivery if isinstance(raw_delivery, Mapping) else {}
    last = {
        "channel": _text(extra.get("lastChannel")),
        "to": _text(extra.get("lastTo")),
        "accountId": _text(extra.get("lastAccountId")),
        "threadId": _text(extra.get("lastThreadId")),
    }
    channel = _text(delivery.get("channel"))
    if channel is not None:
        fields = {name: _text(delivery.get(name)) for name in ("to", "accountId", "threadId")}
        if last["channel"] is None or last["channel"].lower() == channel.lower():
            fields = {name: value or last[name] for name, value in fields.items()}
    elif last["channel"] is not None:
        channel, fields = last["channel"], last
    else:
        channel = _text(extra.get("channel"))
        fields = {}
        if channel is None:
            if keys.tool_kind(entry.key) in _NO_CHANNEL_KINDS:
                return None
            channel = WEBCHAT
    channel = channel.lower()
    if channel == _INTERNAL:
        return None
    to = fields.get("to")
    if channel == WEBCHAT and to is None:
        to = entry.key
    account = fields.get("accountId")
    if account is None:
        account = config.default_account(channel) if config is not None else "default"
    return ChannelContext(
        channel=channel, account_id=account, to=to, thread_id=fields.get("threadId")
    )


# --- binding at spawn time -------------------------------------------------------------------


def bind_thread(
    store: Store,
    plan: ThreadPlan,
    session_key: str,
    now: int,
    *,
    tx: StoreTransaction | None = None,
) -> ThreadBinding:
    """Write the planned binding (blocking: on the store thread). Pass the spawn's ``tx`` to
    commit it with the child; without one it commits alone. Raises
    :class:`~clawline.errors.Conflict` (``conversation already bound: …``) when another
    session took the conversation since the plan — report it as
    ``bind_failed_text(error.message)``."""
    if tx is not None:
        return tx.bindings.bind(plan.binding(session_key, now))
    with store.transaction() as own:
        return own.bindings.bind(plan.binding(session_key, now))


# --- OpenClaw's mode / thread / runtime matrix -----------------------------------------------


def resolve_spawn_mode(mode: str | None, thread: bool) -> Literal["run", "session"]:
    """The effective mode: as given, else ``session`` with ``thread=true``, else ``run``."""
    if mode in ("run", "session"):
        return "session" if mode == "session" else "run"
    return "session" if thread else "run"


def session_mode_error(runtime: str) -> str:
    who = "the ACP session" if runtime == "acp" else "the subagent"
    return f'mode="session" requires thread=true so {who} can stay bound to a thread.'


@dataclass(frozen=True, slots=True)
class SpawnThreadDecision:
    """What the matrix says for one spawn: the effective mode and the binding plan (``None`` without
    ``thread``), or the refusal."""

    mode: Literal["run", "session"]
    plan: ThreadPlan | None = None
    refusal: ThreadRefusal | None = None


class ThreadPlanner:
    """Plans the thread bindings of spawns: :meth:`prepare_subagent_thread`,
    :meth:`prepare_acp_thread` and :meth:`plan_spawn_thread` (the mode / thread / runtime
    matrix). ``channels`` are the adapters that create threads; ``config`` is the parsed
    ``threadBindings`` settings."""

    def __init__(
        self,
        *,
        catalog: SessionCatalog,
        store: Store,
        workers: StoreWorkers,
        channels: ChannelRegistry,
        config: ThreadBindingsConfig,
    ) -> None:
        self._catalog = catalog
        self._store = store
        self._workers = workers
        self._channels = channels
        self._config = config

    async def _requester(self, key: str | None, entry: SessionEntry | None) -> SessionEntry | None:
        if entry is not None or key is None:
            return entry
        return await self._workers.run(self._catalog.get, key)

    async def _conversation_taken(self, target: BindingTarget) -> ThreadRefusal | None:
        bindings = self._store.bindings
        taken = await self._workers.run(
            bindings.active, target.channel, target.account_id, target.conversation_id
        )
        if taken is None:
            return None
        where = f"{target.channel}/{target.account_id}/{target.conversation_id}"
        return ThreadRefusal(bind_failed_text(f"conversation already bound: {where}"))

    def _plan(self, target: BindingTarget, kind: Literal["subagent", "acp"]) -> ThreadPlan:
        adapter = self._channels.get(target.channel)
        settings = self._config.resolve(
            target.channel,
            target.account_id,
            default_placement=adapter.default_placement if adapter else "current",
        )
        return ThreadPlan(
            channel=target.channel,
            account_id=target.account_id,
            conversation_id=target.conversation_id,
            placement=target.placement,
            idle_ms=settings.idle_ms,
            max_age_ms=settings.max_age_ms,
            kind=kind,
            parent_conversation_id=target.parent_conversation_id,
        )

    # --- subagents -------------------------------------------------------------------------------

    async def prepare_subagent_thread(
        self,
        *,
        requester_session_key: str,
        child_session_key: str,
        agent_id: str,
        label: str | None = None,
        mode: str = "session",
        requester_entry: SessionEntry | None = None,
    ) -> ThreadPlan | ThreadRefusal:
        """Check 9 of the subagent spawn (:mod:`clawline.collab.spawn`): prepare the child's thread.

        Call it (on the event loop; it reads the store on the store workers) after steps 1-8
        and before writing anything. ``child_session_key`` is the key the child will get; ``mode``
        is the effective mode (``session``, or ``run`` for ``thread=true, mode="run"``);
        ``requester_entry`` saves a read when the caller already has it.

        Runs the channels' ``subagent_spawning`` hooks with the requester's channel context and
        returns a :class:`ThreadPlan` to pass to :func:`bind_thread` in the spawn's transaction, or
        a :class:`ThreadRefusal` whose ``error`` is exactly one of:

        - ``thread=true is unavailable because no channel plugin registered subagent_spawning
          hooks.`` (no adapter registers the hook);
        - the hook's error text, or ``Failed to prepare thread binding for this subagent
          session.`` when it is blank (e.g. ``Thread bindings are disabled for webchat (…)``,
          ``Thread-bound subagent spawns are disabled for webchat (…)``);
        - ``Unable to create or bind a thread for this subagent session. Session mode is
          unavailable for this target.`` (no hook answered, or it answered not ready: e.g. a
          requester on a channel whose adapter has no hook, or without a channel context);
        - ``Thread bind failed: <msg>`` (a hook raised; or the conversation is already bound:
          ``Thread bind failed: conversation already bound: <channel>/<account>/<conversation>``).

        With the built-in ``webchat`` adapter the child gets its own conversation (``child``
        placement, conversation id = ``child_session_key``); webchat's default top-level placement
        is ``child``, so ``channels.webchat.threadBindings.spawnSubagentSessions = true`` (or the
        session level) must be set to allow it.
        """
        registry = self._channels
        if not registry.has_subagent_spawning_hooks():
            return ThreadRefusal(NO_SPAWNING_HOOKS)
        config = self._config
        entry = await self._requester(requester_session_key, requester_entry)
        context = requester_channel_context(entry, config)
        settings = None
        if context is not None:
            default = registry.default_placement(context.channel)
            settings = config.resolve(
                context.channel, context.account_id, default_placement=default
            )
        event = SubagentSpawning(
            child_session_key=child_session_key,
            requester_session_key=requester_session_key,
            agent_id=agent_id,
            label=label,
            mode=mode,
            requester=context,
            settings=settings,
        )
        try:
            result = await registry.run_subagent_spawning(event)
        except Exception as error:  # a channel's failure becomes the spawn's error text
            return ThreadRefusal(bind_failed_text(error))
        if isinstance(result, SpawningError):
            return ThreadRefusal(result.error.strip() or SUBAGENT_PREPARE_FAILED)
        if not isinstance(result, SpawningOk) or not result.thread_binding_ready:
            return ThreadRefusal(SUBAGENT_NOT_READY)
        if result.target is None:
            return ThreadRefusal(SUBAGENT_NOT_READY)
        taken = await self._conversation_taken(result.target)
        return taken if taken is not None else self._plan(result.target, "subagent")

    # --- ACP -------------------------------------------------------------------------------------

    async def prepare_acp_thread(
        self,
        *,
        requester_session_key: str | None,
        child_session_key: str,
        agent_id: str,
        label: str | None = None,
        requester_entry: SessionEntry | None = None,
    ) -> ThreadPlan | ThreadRefusal:
        """Check 7 of the ACP spawn (:mod:`clawline.collab.spawn_acp`): plan the ACP child's thread
        binding.

        Same contract as :meth:`prepare_subagent_thread` (call before writing; bind the plan with
        :func:`bind_thread` in the spawn's transaction); ``requester_session_key`` may be ``None``
        (no requester: no channel context). Refusals carry ``error_code`` ``thread_binding_invalid``
        and, first failure wins, exactly:

        - ``thread=true for ACP sessions requires a channel context.``;
        - ``Thread bindings are disabled for <ch> (set channels.<ch>.threadBindings.enabled=true to
          override for this account, or session.threadBindings.enabled=true globally).``;
        - ``Thread-bound acp spawns are disabled for <ch> (set
          channels.<ch>.threadBindings.spawnAcpSessions=true to enable).``;
        - ``Thread bindings are unavailable for <channel>.`` (no adapter, or not available);
        - ``Thread bindings do not support <placement> placement for <channel>.``;
        - ``Could not resolve a <channel> conversation for ACP thread spawn.``;
        - ``Thread bind failed: <msg>`` (the adapter failed to create the thread, or the
          conversation is already bound).
        """
        config = self._config
        entry = await self._requester(requester_session_key, requester_entry)
        context = requester_channel_context(entry, config)
        if context is None:
            return ThreadRefusal(ACP_NO_CONTEXT, ACP_THREAD_ERROR_CODE)
        registry = self._channels
        adapter = registry.get(context.channel)
        settings = config.resolve(
            context.channel,
            context.account_id,
            default_placement=registry.default_placement(context.channel),
        )
        try:
            planned = await plan_binding(
                adapter, context, settings, "acp", session_key=child_session_key, label=label
            )
        except Exception as error:  # the adapter could not create the thread
            return ThreadRefusal(bind_failed_text(error), ACP_THREAD_ERROR_CODE)
        if not isinstance(planned, BindingTarget):
            return ThreadRefusal(planned.error, ACP_THREAD_ERROR_CODE)
        taken = await self._conversation_taken(planned)
        if taken is not None:
            return ThreadRefusal(taken.error, ACP_THREAD_ERROR_CODE)
        return self._plan(planned, "acp")

    async def plan_spawn_thread(
        self,
        *,
        runtime: str,
        thread: bool,
        mode: str | None,
        requester_session_key: str | None,
        child_session_key: str,
        agent_id: str,
        label: str | None = None,
        requester_entry: SessionEntry | None = None,
    ) -> SpawnThreadDecision:
        """The matrix in one call: ``mode="session"`` without ``thread`` is refused (ACP:
        ``errorCode`` ``thread_required``); without ``thread`` there is nothing to bind; with it
        the runtime's ``prepare_*_thread`` decides. A spawn may call the prepare functions itself
        instead; this is the same rule."""
        effective = resolve_spawn_mode(mode, thread)
        if effective == "session" and not thread:
            code = "thread_required" if runtime == "acp" else None
            return SpawnThreadDecision(
                effective, refusal=ThreadRefusal(session_mode_error(runtime), code)
            )
        if not thread:
            return SpawnThreadDecision(effective)
        if runtime == "acp":
            prepared = await self.prepare_acp_thread(
                requester_session_key=requester_session_key,
                child_session_key=child_session_key,
                agent_id=agent_id,
                label=label,
                requester_entry=requester_entry,
            )
        else:
            prepared = await self.prepare_subagent_thread(
                requester_session_key=requester_session_key or "",
                child_session_key=child_session_key,
                agent_id=agent_id,
                label=label,
                mode=effective,
                requester_entry=requester_entry,
            )
        if isinstance(prepared, ThreadRefusal):
            return SpawnThreadDecision(effective, refusal=prepared)
        return SpawnThreadDecision(effective, plan=prepared)
