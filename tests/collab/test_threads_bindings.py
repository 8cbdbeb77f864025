"""Living bindings: inbound routing, completion delivery targets, ``/unfocus`` and session
unbinding, idle / max-age expiry (FakeClock) and the sweeper."""

from __future__ import annotations

import pytest

from clawline.channels import SubagentEnded
from clawline.channels.thread_bindings.living import SWEEP_INTERVAL_MS, resolve_delivery_target
from clawline.records.collab import ThreadBinding
from clawline.records.outbox import OutboxTarget
from clawline.runtime import Runtime
from clawline.testing import eventually, settled
from clawline.testing.channels import FakeChannel, threads_channel
from clawline.testing.clock import FakeClock
from clawline.types import JSON
from tests.collab.conftest import MakeServices
from tests.collab.threads_support import CHILD, REQUESTER, make_requester

HOUR = 3_600_000
ACP_CHILD = "agent:codex:acp:1"


async def _bind(
    services: Runtime,
    conversation: str,
    session_key: str = CHILD,
    *,
    idle_ms: int = 0,
    max_age_ms: int = 0,
    channel: str = "forum",
    account: str = "acct",
    parent: str | None = None,
) -> ThreadBinding:
    now = services.clock.now_ms()
    binding = ThreadBinding(
        channel=channel,
        account_id=account,
        conversation_id=conversation,
        session_key=session_key,
        placement="child",
        bound_at=now,
        last_activity_at=now,
        idle_ms=idle_ms,
        max_age_ms=max_age_ms,
        parent_conversation_id=parent,
    )

    def write() -> ThreadBinding:
        with services.store.transaction() as tx:
            return tx.bindings.bind(binding)

    return await services.call(write)


async def _setup(make_services: MakeServices) -> tuple[Runtime, FakeClock, FakeChannel]:
    clock = FakeClock()
    services = await make_services({}, clock)
    forum = threads_channel("forum")
    services.channels.register(forum)
    return services, clock, forum


# --- inbound routing -----------------------------------------------------------------------


async def test_route_inbound_goes_to_the_bound_session_and_counts_as_activity(
    make_services: MakeServices,
) -> None:
    services, clock, _ = await _setup(make_services)
    bound = await _bind(services, "room-1/thread-1", idle_ms=HOUR)
    clock.advance(10 * 60_000)
    assert await services.thread_bindings.route_inbound("Forum", "acct", "room-1/thread-1") == CHILD
    assert bound.id is not None
    stored = services.store.bindings.get(bound.id)
    assert stored is not None
    assert stored.last_activity_at == clock.now_ms()
    assert await services.thread_bindings.route_inbound("forum", "acct", "room-2") is None
    assert await services.thread_bindings.route_inbound("forum", "other", "room-1/thread-1") is None
    assert await services.thread_bindings.route_inbound("sms", "acct", "room-1/thread-1") is None


async def test_route_inbound_default_account(make_services: MakeServices) -> None:
    clock = FakeClock()
    services = await make_services({"channels": {"forum": {"defaultAccount": "bot"}}}, clock)
    await _bind(services, "room", account="bot")
    assert await services.thread_bindings.route_inbound("forum", None, "room") == CHILD
    assert await services.thread_bindings.route_inbound("forum", "", "room") == CHILD


async def test_route_inbound_ends_an_expired_binding(make_services: MakeServices) -> None:
    services, clock, forum = await _setup(make_services)
    await _bind(services, "room", idle_ms=HOUR)
    clock.advance(HOUR)
    assert await services.thread_bindings.route_inbound("forum", "acct", "room") is None
    (ended,) = services.store.bindings.for_session(CHILD, active_only=False)
    assert (ended.active, ended.unbind_reason) == (False, "idle-expired")
    (event,) = forum.ended
    assert (event.target_session_key, event.target_kind, event.reason) == (
        CHILD,
        "subagent",
        "idle-expired",
    )


# --- expiry --------------------------------------------------------------------------------


async def test_idle_expiry_is_renewed_by_activity(make_services: MakeServices) -> None:
    services, clock, forum = await _setup(make_services)
    await _bind(services, "room", idle_ms=HOUR)
    clock.advance(HOUR - 1)
    assert await services.thread_bindings.sweep() == []
    assert await services.thread_bindings.route_inbound("forum", "acct", "room") == CHILD
    clock.advance(HOUR - 1)
    assert await services.thread_bindings.sweep() == []
    clock.advance(1)
    (ended,) = await services.thread_bindings.sweep()
    assert (ended.unbind_reason, ended.unbound_at) == ("idle-expired", clock.now_ms())
    assert [event.reason for event in forum.ended] == ["idle-expired"]
    assert forum.ended[0].bindings == (ended,)
    assert await services.thread_bindings.route_inbound("forum", "acct", "room") is None


async def test_max_age_cannot_be_renewed(make_services: MakeServices) -> None:
    services, clock, forum = await _setup(make_services)
    await _bind(services, "room", idle_ms=HOUR, max_age_ms=2 * HOUR)
    for _ in range(3):
        clock.advance(HOUR // 2)
        assert await services.thread_bindings.route_inbound("forum", "acct", "room") == CHILD
    clock.advance(HOUR // 2 - 1)
    assert await services.thread_bindings.sweep() == []
    clock.advance(1)
    (ended,) = await services.thread_bindings.sweep()
    assert ended.unbind_reason == "max-age-expired"
    assert [event.reason for event in forum.ended] == ["max-age-expired"]


async def test_no_limits_never_expire(make_services: MakeServices) -> None:
    services, clock, _ = await _setup(make_services)
    await _bind(services, "room")
    clock.advance(10_000 * HOUR)
    assert await services.thread_bindings.sweep() == []
    assert await services.thread_bindings.route_inbound("forum", "acct", "room") == CHILD


async def test_sweep_with_explicit_now_and_batches(make_services: MakeServices) -> None:
    services, clock, forum = await _setup(make_services)
    for index in range(3):
        await _bind(services, f"room-{index}", f"{CHILD[:-1]}{index}", idle_ms=HOUR)
    await _bind(services, "acp-room", ACP_CHILD, max_age_ms=HOUR)
    later = clock.now_ms() + HOUR
    first = await services.thread_bindings.sweep(later, batch=2)
    assert len(first) == 2
    rest = await services.thread_bindings.sweep(later)
    assert len(rest) == 2
    reasons = {event.target_session_key: (event.target_kind, event.reason) for event in forum.ended}
    assert reasons[ACP_CHILD] == ("acp", "max-age-expired")
    assert len(reasons) == 4
    assert await services.thread_bindings.sweep(later) == []


async def test_the_runtime_sweeps_expired_bindings_every_interval(
    make_services: MakeServices,
) -> None:
    """Binding expiry runs in the runtime's background task group: a pass at start-up, then
    one every SWEEP_INTERVAL_MS of the runtime's clock (virtual time here)."""
    services, clock, forum = await _setup(make_services)
    await _bind(services, "room", idle_ms=HOUR)
    clock.advance(HOUR)
    await services.start()
    try:
        await eventually(lambda: len(forum.ended) == 1, what="the start-up pass")
        assert [event.reason for event in forum.ended] == ["idle-expired"]
        await _bind(services, "later", idle_ms=SWEEP_INTERVAL_MS)
        await clock.run_for(SWEEP_INTERVAL_MS - 1)
        await settled(services)
        assert len(forum.ended) == 1  # not idle long enough yet, and no pass has come
        await clock.run_for(SWEEP_INTERVAL_MS + 1)
        await eventually(lambda: len(forum.ended) == 2, what="the next periodic pass")
        assert [event.reason for event in forum.ended] == ["idle-expired", "idle-expired"]
    finally:
        await services.stop()


# --- unbinding -----------------------------------------------------------------------------


async def test_unfocus_unbinds_the_conversation(make_services: MakeServices) -> None:
    services, clock, forum = await _setup(make_services)
    await _bind(services, "room")
    ended = await services.thread_bindings.unbind(
        channel="forum", account_id="acct", conversation_id="room"
    )
    assert ended is not None
    assert (ended.unbind_reason, ended.unbound_at) == (
        "unfocus",
        clock.now_ms(),
    )
    assert await services.thread_bindings.route_inbound("forum", "acct", "room") is None
    assert (
        await services.thread_bindings.unbind(
            channel="forum", account_id="acct", conversation_id="room"
        )
        is None
    )
    assert [(event.reason, event.account_id) for event in forum.ended] == [("unfocus", "acct")]
    # The conversation is free again.
    await _bind(services, "room", ACP_CHILD)
    assert await services.thread_bindings.route_inbound("forum", "acct", "room") == ACP_CHILD


async def test_unbind_session_ends_all_its_bindings(make_services: MakeServices) -> None:
    services, _, forum = await _setup(make_services)
    await _bind(services, "room-1")
    await _bind(services, "room-2")
    await _bind(services, "room-3", ACP_CHILD)
    ended = await services.thread_bindings.unbind_session(CHILD, reason="killed", outcome="killed")
    assert sorted(binding.conversation_id for binding in ended) == ["room-1", "room-2"]
    (event,) = forum.ended
    assert (event.reason, event.outcome, len(event.bindings)) == ("killed", "killed", 2)
    assert await services.thread_bindings.route_inbound("forum", "acct", "room-3") == ACP_CHILD
    assert await services.thread_bindings.unbind_session(CHILD, reason="killed") == []
    assert len(forum.ended) == 1


async def test_unbind_deleted_session_hooks(make_services: MakeServices) -> None:
    services, _, forum = await _setup(make_services)
    await _bind(services, "room-1")
    assert (
        len(
            await services.thread_bindings.unbind_deleted_session(
                CHILD, deleted=True, emit_hooks=False
            )
        )
        == 1
    )
    assert forum.ended == []
    # Deleted without bindings: OpenClaw still fires subagent_ended.
    assert await services.thread_bindings.unbind_deleted_session(ACP_CHILD, deleted=True) == []
    assert forum.ended == [
        SubagentEnded(
            target_session_key=ACP_CHILD,
            target_kind="acp",
            reason="session-delete",
            outcome="deleted",
        )
    ]
    assert (
        await services.thread_bindings.unbind_deleted_session("agent:main:gone", deleted=False)
        == []
    )
    assert len(forum.ended) == 1


# --- completion delivery -------------------------------------------------------------------


def _target(
    services: Runtime,
    origin: dict[str, JSON] | None = None,
    requester: str | None = None,
) -> OutboxTarget | None:
    bindings = services.store.bindings.active_for_sessions([CHILD]).get(CHILD, [])
    entry = None if requester is None else services.store.get(requester)
    config = services.agents_config.thread_bindings
    return resolve_delivery_target(bindings, entry, config, requester_origin=origin)


async def test_delivery_prefers_the_bound_thread(make_services: MakeServices) -> None:
    services, _, _ = await _setup(make_services)
    await _bind(services, "thread-1", parent="room-1")
    newest = await _bind(services, "web-conv", channel="webchat", account="default")
    origin: dict[str, JSON] = {"channel": "forum", "to": "room-1", "accountId": "acct"}
    assert _target(services, origin) == OutboxTarget("forum", "acct", "room-1", "thread-1")
    assert _target(services) == newest.target() == OutboxTarget("webchat", "default", "web-conv")
    assert services.store.bindings.active_for_sessions([CHILD, "agent:main:none"]).keys() == {CHILD}


async def test_delivery_without_binding_uses_the_origin(make_services: MakeServices) -> None:
    services, _, _ = await _setup(make_services)
    origin: dict[str, JSON] = {
        "channel": "forum",
        "to": "room-1",
        "accountId": "acct",
        "threadId": 7,
    }
    assert _target(services, origin) == OutboxTarget("forum", "acct", "room-1", "7")


async def test_channel_only_origin_is_completed_from_the_requester(
    make_services: MakeServices,
) -> None:
    services, _, _ = await _setup(make_services)
    await services.call(
        make_requester,
        services,
        REQUESTER,
        lastChannel="forum",
        lastTo="room-5",
        lastAccountId="acct",
        lastThreadId="t-1",
    )
    target = _target(services, {"channel": "forum"}, REQUESTER)
    assert target == OutboxTarget("forum", "acct", "room-5", "t-1")
    assert _target(services, {"channel": "sms"}, REQUESTER) is None  # nowhere to send it


async def test_no_origin_uses_the_requester_context(make_services: MakeServices) -> None:
    services, _, _ = await _setup(make_services)
    await services.call(make_requester, services, REQUESTER)
    assert _target(services, requester=REQUESTER) is None  # the web chat reads it itself
    await services.call(
        make_requester, services, "agent:main:talker", lastChannel="forum", lastTo="room-9"
    )
    assert _target(services, requester="agent:main:talker") == OutboxTarget(
        "forum", "default", "room-9"
    )
    assert _target(services) is None
    cron = "agent:main:cron:nightly"
    await services.call(make_requester, services, cron)
    assert _target(services, requester=cron) is None


@pytest.mark.parametrize("reason", ["idle-expired", "max-age-expired"])
def test_expiry_reason_names(reason: str) -> None:
    binding = ThreadBinding(
        channel="forum",
        account_id="a",
        conversation_id="c",
        session_key=CHILD,
        placement="child",
        bound_at=0,
        last_activity_at=0,
        idle_ms=HOUR if reason == "idle-expired" else 2 * HOUR,
        max_age_ms=2 * HOUR if reason == "idle-expired" else HOUR,
    )
    assert binding.expiry() == (HOUR, reason)
