"""The channel adapter registry, its hooks, the webchat adapter and the test adapters."""

from __future__ import annotations

import logging

import pytest

from clawline.channels import (
    BindingCapabilities,
    ChannelContext,
    ChannelRegistry,
    ConversationRef,
    SpawningError,
    SpawningOk,
    SubagentEnded,
    SubagentSpawning,
    WebchatAdapter,
    default_channel_registry,
)
from clawline.errors import Conflict, InvalidField
from clawline.testing.channels import FakeChannel, plain_channel, threads_channel


def _event(channel: str | None = "threads") -> SubagentSpawning:
    requester = None if channel is None else ChannelContext(channel, "default", "room")
    return SubagentSpawning(
        child_session_key="agent:main:subagent:c",
        requester_session_key="agent:main:main",
        agent_id="main",
        label=None,
        mode="session",
        requester=requester,
        settings=None,
    )


def test_default_registry_has_webchat_with_both_placements() -> None:
    registry = default_channel_registry()
    assert registry.ids() == ["webchat"]
    assert registry.capabilities("WebChat", "default").to_json() == {
        "adapterAvailable": True,
        "bindSupported": True,
        "placements": ["current", "child"],
    }
    assert registry.default_placement("webchat") == "child"
    assert registry.has_subagent_spawning_hooks()


def test_unknown_channel_has_no_capabilities() -> None:
    registry = ChannelRegistry()
    assert registry.get("discord") is None
    assert registry.capabilities("discord", "a").to_json() == {
        "adapterAvailable": False,
        "bindSupported": False,
        "placements": [],
    }
    assert registry.default_placement("discord") == "current"
    assert not registry.has_subagent_spawning_hooks()


def test_register_refuses_duplicates_and_bad_ids() -> None:
    registry = ChannelRegistry([threads_channel("forum")])
    with pytest.raises(Conflict, match="already registered: forum"):
        registry.register(threads_channel("forum"))
    replacement = threads_channel("forum")
    registry.register(replacement, replace=True)
    assert registry.get("FORUM") is replacement
    with pytest.raises(InvalidField):
        registry.register(threads_channel("Forum"))
    with pytest.raises(InvalidField):
        registry.register(threads_channel(" "))
    assert registry.unregister("forum") is replacement
    assert registry.ids() == []


def test_plain_channel_has_no_hook_and_no_binding_adapter() -> None:
    registry = ChannelRegistry([plain_channel("sms")])
    assert not registry.has_subagent_spawning_hooks()
    capabilities = registry.capabilities("sms", "x")
    assert capabilities == BindingCapabilities(False, False, ())
    assert not capabilities.supports("current")


def test_fake_channel_unavailable_for_one_account() -> None:
    channel = threads_channel("forum", unavailable_accounts=("off",))
    assert channel.capabilities("off").adapter_available is False
    assert channel.capabilities("on").supports("child")


async def test_spawning_hooks_first_answer_wins_in_order() -> None:
    calls: list[str] = []

    async def declines(event: SubagentSpawning) -> None:
        calls.append("declines")

    async def answers(event: SubagentSpawning) -> SpawningError:
        calls.append("answers")
        return SpawningError("from hook")

    async def never(event: SubagentSpawning) -> SpawningError:
        calls.append("never")
        return SpawningError("too late")

    registry = ChannelRegistry()
    for hook in (declines, answers, never):
        registry.add_subagent_spawning_hook(hook)
    assert registry.has_subagent_spawning_hooks()
    assert await registry.run_subagent_spawning(_event()) == SpawningError("from hook")
    assert calls == ["declines", "answers"]


async def test_adapter_hook_declines_other_channels() -> None:
    forum = threads_channel("forum")
    registry = ChannelRegistry([forum])
    assert await registry.run_subagent_spawning(_event("elsewhere")) is None
    assert await registry.run_subagent_spawning(_event(None)) is None
    assert len(forum.spawning_events) == 2


async def test_spawning_hook_exception_propagates() -> None:
    async def broken(event: SubagentSpawning) -> None:
        raise RuntimeError("boom")

    registry = ChannelRegistry()
    registry.add_subagent_spawning_hook(broken)
    with pytest.raises(RuntimeError, match="boom"):
        await registry.run_subagent_spawning(_event())


async def test_subagent_ended_reaches_adapters_and_hooks_despite_a_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    forum = threads_channel("forum")
    registry = ChannelRegistry([forum])
    seen: list[str] = []

    def failing(event: SubagentEnded) -> None:
        raise ValueError("listener bug")

    async def later(event: SubagentEnded) -> None:
        seen.append(event.reason)

    registry.add_subagent_ended_hook(failing)
    registry.add_subagent_ended_hook(later)
    event = SubagentEnded(
        target_session_key="agent:main:subagent:c", target_kind="subagent", reason="unfocus"
    )
    with caplog.at_level(logging.ERROR, logger="clawline.channels"):
        await registry.fire_subagent_ended(event)
    assert forum.ended == [event]
    assert seen == ["unfocus"]
    assert "subagent_ended listener failed" in caplog.text


def test_subagent_ended_json_shape() -> None:
    event = SubagentEnded(
        target_session_key="agent:main:acp:x",
        target_kind="acp",
        reason="session-delete",
        outcome="deleted",
        account_id="default",
    )
    assert event.to_json() == {
        "targetSessionKey": "agent:main:acp:x",
        "targetKind": "acp",
        "reason": "session-delete",
        "sendFarewell": True,
        "accountId": "default",
        "outcome": "deleted",
        "bindings": [],
    }


async def test_webchat_child_conversation_is_the_child_session() -> None:
    webchat = WebchatAdapter()
    context = ChannelContext("webchat", "default", to="agent:main:main")
    assert webchat.placement_for(context) == "child"
    parent = webchat.current_conversation(context)
    assert parent == ConversationRef("agent:main:main")
    child = await webchat.create_child_conversation(
        "default", parent, session_key="agent:main:subagent:k", label=None
    )
    assert child == ConversationRef(
        "agent:main:subagent:k", parent_conversation_id="agent:main:main"
    )


def test_current_conversation_prefers_the_thread() -> None:
    webchat = WebchatAdapter()
    inside = ChannelContext("webchat", "default", to="room", thread_id="t1")
    assert webchat.current_conversation(inside) == ConversationRef(
        "t1", parent_conversation_id="room"
    )
    assert webchat.placement_for(inside) == "current"
    assert webchat.current_conversation(ChannelContext("webchat", "default")) is None


async def test_fake_channel_records_created_threads_and_can_fail() -> None:
    forum = FakeChannel("forum")
    made = await forum.create_child_conversation(
        "a", ConversationRef("room"), session_key="agent:main:subagent:1", label="l"
    )
    assert made.conversation_id == "room/thread-1"
    assert forum.created[0].label == "l"
    broken = FakeChannel("forum", create_error=OSError("rate limited"))
    with pytest.raises(OSError, match="rate limited"):
        await broken.create_child_conversation(
            "a", ConversationRef("room"), session_key="agent:main:subagent:1", label=None
        )


async def test_fake_channel_scripted_hook() -> None:
    async def script(event: SubagentSpawning) -> SpawningOk:
        return SpawningOk(thread_binding_ready=False)

    forum = threads_channel("forum", hook=script)
    assert await forum.subagent_spawning(_event("forum")) == SpawningOk(False)
