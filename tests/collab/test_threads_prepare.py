"""``prepare_subagent_thread`` / ``prepare_acp_thread`` beyond the matrix: hooks' answers and
failures, placements, conversations, conflicts, requesters without a channel context, and
binding the plan inside the spawn's transaction."""

from __future__ import annotations

from typing import Any

import pytest

from clawline.channels import (
    BindingTarget,
    ChannelRegistry,
    SpawningError,
    SpawningOk,
    SpawningResult,
    SubagentSpawning,
)
from clawline.channels.thread_bindings.planner import ThreadPlan, ThreadRefusal, bind_thread
from clawline.errors import Conflict
from clawline.runtime import Runtime
from clawline.testing.channels import FakeChannel, plain_channel, threads_channel
from tests.collab.conftest import MakeServices
from tests.collab.threads_support import (
    CHILD,
    REQUESTER,
    channel_config,
    make_requester,
    planner,
)

OPT_IN = {"spawnSubagentSessions": True, "spawnAcpSessions": True}
FORUM_ROOM = {"deliveryContext": {"channel": "forum", "to": "room-1", "accountId": "acct"}}
NOT_READY = (
    "Unable to create or bind a thread for this subagent session. "
    "Session mode is unavailable for this target."
)


async def _services(
    make_services: MakeServices, raw: dict[str, Any] | None = None, **extra: Any
) -> Runtime:
    services = await make_services(
        raw if raw is not None else channel_config("forum", channel_level=OPT_IN)
    )
    await services.call(make_requester, services, REQUESTER, **extra)
    return services


async def _subagent(services: Runtime, **options: Any) -> ThreadPlan | ThreadRefusal:
    return await planner(services).prepare_subagent_thread(
        requester_session_key=options.pop("requester", REQUESTER),
        child_session_key=CHILD,
        agent_id="main",
        **options,
    )


async def _acp(services: Runtime, requester: str | None = REQUESTER) -> ThreadPlan | ThreadRefusal:
    return await planner(services).prepare_acp_thread(
        requester_session_key=requester,
        child_session_key="agent:codex:acp:1",
        agent_id="codex",
    )


def _error(result: ThreadPlan | ThreadRefusal) -> str:
    assert isinstance(result, ThreadRefusal), result
    return result.error


# --- subagent hooks ----------------------------------------------------------------------------


async def test_no_registered_hooks(make_services: MakeServices) -> None:
    services = await _services(make_services, **FORUM_ROOM)
    services.channels = ChannelRegistry([plain_channel("forum")])
    assert _error(await _subagent(services)) == (
        "thread=true is unavailable because no channel plugin registered subagent_spawning hooks."
    )
    # ACP does not need hooks: the capability check speaks instead.
    assert _error(await _acp(services)) == "Thread bindings are unavailable for forum."


def _scripted(answer: SpawningResult | Exception | None) -> FakeChannel:
    async def hook(event: SubagentSpawning) -> SpawningResult | None:
        if isinstance(answer, Exception):
            raise answer
        return answer

    return threads_channel("forum", hook=hook)


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (SpawningError("Forum is read-only today."), "Forum is read-only today."),
        (SpawningError("  "), "Failed to prepare thread binding for this subagent session."),
        (SpawningOk(thread_binding_ready=False), NOT_READY),
        (SpawningOk(thread_binding_ready=True), NOT_READY),
        (None, NOT_READY),
        (RuntimeError("gateway timeout"), "Thread bind failed: gateway timeout"),
        (RuntimeError(), "Thread bind failed: RuntimeError"),
    ],
)
async def test_hook_answers(
    make_services: MakeServices, answer: SpawningResult | Exception | None, error: str
) -> None:
    services = await _services(make_services, **FORUM_ROOM)
    services.channels = ChannelRegistry([_scripted(answer)])
    assert _error(await _subagent(services)) == error


async def test_a_custom_hook_can_bind_elsewhere(make_services: MakeServices) -> None:
    target = BindingTarget("forum", "acct", "lobby", "current")
    services = await _services(make_services, **FORUM_ROOM)
    services.channels = ChannelRegistry([_scripted(SpawningOk(True, target))])
    plan = await _subagent(services)
    assert isinstance(plan, ThreadPlan)
    assert (plan.conversation_id, plan.placement, plan.kind) == ("lobby", "current", "subagent")


async def test_hook_event_carries_the_requester_and_its_settings(
    make_services: MakeServices,
) -> None:
    raw = channel_config("forum", channel_level={**OPT_IN, "idleHours": 3})
    services = await _services(make_services, raw, **FORUM_ROOM)
    forum = threads_channel("forum")
    services.channels.register(forum)
    plan = await _subagent(services, label="scout", mode="run")
    assert isinstance(plan, ThreadPlan)
    (event,) = forum.spawning_events
    assert event.requester_session_key == REQUESTER
    assert (event.mode, event.label, event.agent_id) == ("run", "scout", "main")
    assert event.settings is not None
    assert event.settings.idle_hours == 3
    assert plan.idle_ms == 3 * 3_600_000


async def test_requester_without_channel_context(make_services: MakeServices) -> None:
    cron = "agent:main:cron:nightly"
    services = await _services(make_services)
    await services.call(make_requester, services, cron)
    assert _error(await _subagent(services, requester=cron)) == NOT_READY
    assert _error(await _acp(services, cron)) == (
        "thread=true for ACP sessions requires a channel context."
    )
    assert _error(await _acp(services, None)) == (
        "thread=true for ACP sessions requires a channel context."
    )
    assert _error(await _acp(services, "agent:main:missing")) == (
        "thread=true for ACP sessions requires a channel context."
    )


# --- placements and conversations ------------------------------------------------------------


async def test_child_placement_unsupported(make_services: MakeServices) -> None:
    services = await _services(make_services, **FORUM_ROOM)
    services.channels.register(threads_channel("forum", placements=("current",)))
    text = "Thread bindings do not support child placement for forum."
    assert _error(await _subagent(services)) == text
    assert _error(await _acp(services)) == text


async def test_inside_a_thread_binds_that_thread(make_services: MakeServices) -> None:
    context = {"channel": "forum", "to": "room-1", "threadId": "t-7", "accountId": "acct"}
    services = await _services(make_services, deliveryContext=context)
    forum = threads_channel("forum")
    services.channels.register(forum)
    plan = await _acp(services)
    assert isinstance(plan, ThreadPlan)
    assert (plan.conversation_id, plan.placement, plan.parent_conversation_id) == (
        "t-7",
        "current",
        "room-1",
    )
    assert forum.created == []


async def test_current_placement_unsupported(make_services: MakeServices) -> None:
    context = {"channel": "forum", "to": "room-1", "threadId": "t-7"}
    services = await _services(make_services, deliveryContext=context)
    services.channels.register(threads_channel("forum", placements=("child",)))
    text = "Thread bindings do not support current placement for forum."
    assert _error(await _acp(services)) == text
    assert _error(await _subagent(services)) == text


async def test_bind_not_supported_refuses_every_placement(make_services: MakeServices) -> None:
    services = await _services(make_services, **FORUM_ROOM)
    services.channels.register(threads_channel("forum", bind_supported=False))
    text = "Thread bindings do not support child placement for forum."
    assert _error(await _acp(services)) == text


async def test_unavailable_for_one_account(make_services: MakeServices) -> None:
    services = await _services(make_services, **FORUM_ROOM)
    services.channels.register(threads_channel("forum", unavailable_accounts=("acct",)))
    assert _error(await _acp(services)) == "Thread bindings are unavailable for forum."
    assert _error(await _subagent(services)) == "Thread bindings are unavailable for forum."


async def test_channel_only_context_has_no_conversation(make_services: MakeServices) -> None:
    services = await _services(make_services, deliveryContext={"channel": "forum"})
    services.channels.register(threads_channel("forum"))
    assert _error(await _acp(services)) == (
        "Could not resolve a forum conversation for ACP thread spawn."
    )
    assert _error(await _subagent(services)) == NOT_READY


async def test_channel_only_context_completed_from_last_route(make_services: MakeServices) -> None:
    services = await _services(
        make_services, deliveryContext={"channel": "forum"}, lastChannel="forum", lastTo="room-2"
    )
    services.channels.register(threads_channel("forum"))
    plan = await _acp(services)
    assert isinstance(plan, ThreadPlan)
    assert plan.conversation_id == "room-2/thread-1"


async def test_thread_creation_failure(make_services: MakeServices) -> None:
    services = await _services(make_services, **FORUM_ROOM)
    services.channels.register(threads_channel("forum", create_error=OSError("rate limited")))
    assert _error(await _subagent(services)) == "Thread bind failed: rate limited"
    refusal = await _acp(services)
    assert isinstance(refusal, ThreadRefusal)
    assert (refusal.error, refusal.error_code) == (
        "Thread bind failed: rate limited",
        "thread_binding_invalid",
    )


async def test_default_account_from_config(make_services: MakeServices) -> None:
    raw = channel_config("forum", channel_level=OPT_IN)
    raw["channels"]["forum"]["defaultAccount"] = "bot"
    services = await _services(make_services, raw, deliveryContext={"channel": "forum", "to": "r"})
    services.channels.register(threads_channel("forum"))
    plan = await _acp(services)
    assert isinstance(plan, ThreadPlan)
    assert plan.account_id == "bot"


async def test_plan_limits_follow_the_precedence(make_services: MakeServices) -> None:
    raw = channel_config(
        "forum",
        session={"idleHours": 2, "maxAgeHours": 9},
        channel_level={**OPT_IN, "maxAgeHours": 5},
        accounts={"acct": {"idleHours": 1}},
    )
    services = await _services(make_services, raw, **FORUM_ROOM)
    services.channels.register(threads_channel("forum"))
    plan = await _subagent(services)
    assert isinstance(plan, ThreadPlan)
    assert (plan.idle_ms, plan.max_age_ms) == (3_600_000, 5 * 3_600_000)


# --- conflicts and binding at spawn time -----------------------------------------------------


async def test_conversation_already_bound(make_services: MakeServices) -> None:
    context = {"channel": "forum", "to": "room-1", "threadId": "t-7", "accountId": "acct"}
    services = await _services(make_services, deliveryContext=context)
    services.channels.register(threads_channel("forum"))
    first = await _acp(services)
    assert isinstance(first, ThreadPlan)
    await services.call(bind_thread, services.store, first, "agent:codex:acp:1", 1_000)
    text = "Thread bind failed: conversation already bound: forum/acct/t-7"
    refusal = await _acp(services)
    assert isinstance(refusal, ThreadRefusal)
    assert (refusal.error, refusal.error_code) == (text, "thread_binding_invalid")
    assert _error(await _subagent(services)) == text
    # A plan made before the conversation was taken fails at bind time: Conflict.
    with pytest.raises(Conflict, match="conversation already bound: forum/acct/t-7"):
        await services.call(bind_thread, services.store, first, CHILD, 2_000)


def _spawn_with_binding(services: Runtime, plan: ThreadPlan, fail: bool) -> None:
    with services.catalog.transaction() as work:
        work.patch(CHILD, {"spawnedBy": REQUESTER})
        bind_thread(services.store, plan, CHILD, services.clock.now_ms(), tx=work.tx)
        if fail:
            raise RuntimeError("registry failure")


async def test_binding_commits_with_the_spawn_transaction(make_services: MakeServices) -> None:
    services = await _services(make_services, channel_config("webchat", channel_level=OPT_IN))
    plan = await _subagent(services)
    assert isinstance(plan, ThreadPlan)
    assert (plan.channel, plan.conversation_id, plan.placement) == ("webchat", CHILD, "child")
    assert plan.delivery_context() == {  # the child's thread inside the requester's chat
        "channel": "webchat",
        "to": REQUESTER,
        "accountId": "default",
        "threadId": CHILD,
    }
    with pytest.raises(RuntimeError):
        await services.call(_spawn_with_binding, services, plan, True)
    assert services.store.get(CHILD) is None
    assert services.store.bindings.for_session(CHILD) == []
    await services.call(_spawn_with_binding, services, plan, False)
    assert services.store.get(CHILD) is not None
    (binding,) = services.store.bindings.for_session(CHILD)
    assert (binding.channel, binding.account_id, binding.conversation_id) == (
        "webchat",
        "default",
        CHILD,
    )
    assert binding.idle_ms == 24 * 3_600_000
    assert binding.placement == "child"
