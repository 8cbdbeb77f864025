"""The thread binding matrix: adapter x runtime x thread/mode (OpenClaw's matrix) x config
(enabled at session / channel / account level, spawn flags) → the exact outcome.

Adapters: the built-in ``webchat`` (requester without channel fields: its conversation is its
session key), a threads-capable test channel and a channel without thread support (the latter
two reached through the requester's ``deliveryContext``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from clawline.channels.thread_bindings.planner import SpawnThreadDecision
from clawline.runtime import Runtime
from clawline.testing.channels import FakeChannel, plain_channel, threads_channel
from tests.collab.conftest import MakeServices
from tests.collab.threads_support import CHILD, REQUESTER, channel_config, make_requester, planner

OPT_IN = {"spawnSubagentSessions": True, "spawnAcpSessions": True}
NOT_READY = (
    "Unable to create or bind a thread for this subagent session. "
    "Session mode is unavailable for this target."
)
WEBCHAT_DISABLED = (
    "Thread bindings are disabled for webchat (set channels.webchat.threadBindings.enabled=true"
    " to override for this account, or session.threadBindings.enabled=true globally)."
)
WEBCHAT_SUBAGENT_OFF = (
    "Thread-bound subagent spawns are disabled for webchat "
    "(set channels.webchat.threadBindings.spawnSubagentSessions=true to enable)."
)
WEBCHAT_ACP_OFF = (
    "Thread-bound acp spawns are disabled for webchat "
    "(set channels.webchat.threadBindings.spawnAcpSessions=true to enable)."
)


def disabled(channel: str) -> str:
    return (
        f"Thread bindings are disabled for {channel} (set channels.{channel}.threadBindings."
        "enabled=true to override for this account, or session.threadBindings.enabled=true "
        "globally)."
    )


def spawn_off(kind: str, channel: str) -> str:
    flag = "spawnAcpSessions" if kind == "acp" else "spawnSubagentSessions"
    return (
        f"Thread-bound {kind} spawns are disabled for {channel} "
        f"(set channels.{channel}.threadBindings.{flag}=true to enable)."
    )


# adapter name → (channel, requester account, requester extra fields, child conversation)
ADAPTERS: dict[str, tuple[str, str, dict[str, Any], str | None]] = {
    "webchat": ("webchat", "default", {}, CHILD),
    "threads": (
        "threads",
        "acct",
        {"deliveryContext": {"channel": "threads", "to": "room-1", "accountId": "acct"}},
        "room-1/thread-1",
    ),
    "plain": (
        "plain",
        "acct",
        {"deliveryContext": {"channel": "plain", "to": "room-1", "accountId": "acct"}},
        None,
    ),
}

CONFIGS: dict[str, Callable[[str, str], dict[str, Any]]] = {
    "defaults": lambda ch, acct: {},
    "opt_in": lambda ch, acct: channel_config(ch, channel_level=OPT_IN),
    "session_opt_in": lambda ch, acct: channel_config(ch, session=OPT_IN),
    "session_off": lambda ch, acct: channel_config(
        ch, session={"enabled": False}, channel_level=OPT_IN
    ),
    "channel_off": lambda ch, acct: channel_config(ch, channel_level={"enabled": False, **OPT_IN}),
    "account_off": lambda ch, acct: channel_config(
        ch, channel_level=OPT_IN, accounts={acct: {"enabled": False}}
    ),
    "account_on": lambda ch, acct: channel_config(
        ch,
        session={"enabled": False},
        channel_level={"enabled": False, **OPT_IN},
        accounts={acct: {"enabled": True}},
    ),
    "other_account_off": lambda ch, acct: channel_config(
        ch, channel_level=OPT_IN, accounts={"someone-else": {"enabled": False}}
    ),
    "spawn_off": lambda ch, acct: channel_config(
        ch, channel_level={"spawnSubagentSessions": False, "spawnAcpSessions": False}
    ),
}

PLAN = "plan"


def _thread_capable(channel: str, kind: str) -> dict[str, str]:
    sub_or_acp_off = spawn_off(kind, channel)
    return {
        "defaults": sub_or_acp_off,
        "opt_in": PLAN,
        "session_opt_in": PLAN,
        "session_off": disabled(channel),
        "channel_off": disabled(channel),
        "account_off": disabled(channel),
        "account_on": PLAN,
        "other_account_off": PLAN,
        "spawn_off": sub_or_acp_off,
    }


EXPECTED: dict[tuple[str, str], dict[str, str]] = {
    ("webchat", "subagent"): {
        "defaults": WEBCHAT_SUBAGENT_OFF,
        "opt_in": PLAN,
        "session_opt_in": PLAN,
        "session_off": WEBCHAT_DISABLED,
        "channel_off": WEBCHAT_DISABLED,
        "account_off": WEBCHAT_DISABLED,
        "account_on": PLAN,
        "other_account_off": PLAN,
        "spawn_off": WEBCHAT_SUBAGENT_OFF,
    },
    ("webchat", "acp"): {
        "defaults": WEBCHAT_ACP_OFF,
        "opt_in": PLAN,
        "session_opt_in": PLAN,
        "session_off": WEBCHAT_DISABLED,
        "channel_off": WEBCHAT_DISABLED,
        "account_off": WEBCHAT_DISABLED,
        "account_on": PLAN,
        "other_account_off": PLAN,
        "spawn_off": WEBCHAT_ACP_OFF,
    },
    ("threads", "subagent"): _thread_capable("threads", "subagent"),
    ("threads", "acp"): _thread_capable("threads", "acp"),
    # No subagent_spawning hook answers for "plain" (webchat's and the threads channel's
    # decline another channel's requester): not ready, whatever the config.
    ("plain", "subagent"): dict.fromkeys(CONFIGS, NOT_READY),
    ("plain", "acp"): {
        "defaults": "Thread bindings are unavailable for plain.",
        "opt_in": "Thread bindings are unavailable for plain.",
        "session_opt_in": "Thread bindings are unavailable for plain.",
        "session_off": disabled("plain"),
        "channel_off": disabled("plain"),
        "account_off": disabled("plain"),
        "account_on": "Thread bindings are unavailable for plain.",
        "other_account_off": "Thread bindings are unavailable for plain.",
        "spawn_off": spawn_off("acp", "plain"),
    },
}


async def _setup(
    make_services: MakeServices, adapter: str, config: str
) -> tuple[Runtime, FakeChannel]:
    channel, account, extra, _ = ADAPTERS[adapter]
    services = await make_services(CONFIGS[config](channel, account))
    threads = threads_channel("threads")
    services.channels.register(threads)
    services.channels.register(plain_channel("plain"))
    await services.call(make_requester, services, REQUESTER, **extra)
    return services, threads


async def _decide(
    services: Runtime, runtime: str, thread: bool, mode: str | None
) -> SpawnThreadDecision:
    return await planner(services).plan_spawn_thread(
        runtime=runtime,
        thread=thread,
        mode=mode,
        requester_session_key=REQUESTER,
        child_session_key=CHILD,
        agent_id="main",
        label="helper",
    )


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("runtime", ["subagent", "acp"])
@pytest.mark.parametrize("adapter", list(ADAPTERS))
@pytest.mark.parametrize(
    ("mode", "effective"), [(None, "session"), ("session", "session"), ("run", "run")]
)
async def test_thread_true(
    make_services: MakeServices,
    adapter: str,
    runtime: str,
    config: str,
    mode: str | None,
    effective: str,
) -> None:
    services, threads = await _setup(make_services, adapter, config)
    decision = await _decide(services, runtime, True, mode)
    expected = EXPECTED[(adapter, runtime)][config]
    channel, account, _, conversation = ADAPTERS[adapter]
    assert decision.mode == effective
    if expected != PLAN:
        assert decision.plan is None
        assert decision.refusal is not None
        assert decision.refusal.error == expected
        assert decision.refusal.status == "error"
        code = "thread_binding_invalid" if runtime == "acp" else None
        assert decision.refusal.error_code == code
        assert threads.created == []
        return
    plan = decision.plan
    assert decision.refusal is None
    assert plan is not None
    assert (plan.channel, plan.account_id, plan.conversation_id) == (channel, account, conversation)
    assert plan.placement == "child"
    assert plan.kind == runtime
    assert (plan.idle_ms, plan.max_age_ms) == (24 * 3_600_000, 0)
    if adapter == "threads":
        assert [made.session_key for made in threads.created] == [CHILD]
        assert plan.parent_conversation_id == "room-1"
        if runtime == "subagent":
            (event,) = threads.spawning_events
            assert event.mode == effective
            assert event.label == "helper"
            assert event.requester is not None
            assert event.requester.to == "room-1"
    else:
        assert plan.parent_conversation_id == REQUESTER


@pytest.mark.parametrize("config", ["defaults", "opt_in", "channel_off"])
@pytest.mark.parametrize("runtime", ["subagent", "acp"])
@pytest.mark.parametrize("adapter", list(ADAPTERS))
@pytest.mark.parametrize("mode", [None, "run", "session"])
async def test_thread_false(
    make_services: MakeServices, adapter: str, runtime: str, config: str, mode: str | None
) -> None:
    services, threads = await _setup(make_services, adapter, config)
    decision = await _decide(services, runtime, False, mode)
    assert decision.plan is None
    assert threads.spawning_events == []
    assert threads.created == []
    if mode != "session":
        assert decision.mode == "run"
        assert decision.refusal is None
        return
    assert decision.refusal is not None
    if runtime == "acp":
        assert decision.refusal.error == (
            'mode="session" requires thread=true so the ACP session can stay bound to a thread.'
        )
        assert decision.refusal.error_code == "thread_required"
    else:
        assert decision.refusal.error == (
            'mode="session" requires thread=true so the subagent can stay bound to a thread.'
        )
        assert decision.refusal.error_code is None
