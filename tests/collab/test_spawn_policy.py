"""sessions_spawn's sub-agent checks (OpenClaw's), one by one with their exact
texts and statuses, and in their order: a request breaking two rules at once gets the earlier
rule's refusal. Every refusal leaves nothing behind (see ``refused``)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from clawline.runtime import Runtime
from clawline.testing import eventually
from clawline.testing.channels import plain_channel
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN
from tests.collab.test_spawn_lineage import (
    accepted,
    descendants_of,
    gated,
    limits,
    make_requester,
    spawn,
    tasks_owned_by,
)
from tests.collab.test_spawn_validation import (
    DEPTH,
    INVALID_AGENT,
    MAX_CHILDREN,
    NO_HOOKS,
    NOT_ALLOWED,
    REQUIRE_AGENT_ID,
    SANDBOX_REQUIRE,
    SESSION_NEEDS_THREAD,
    THINKING,
    UNKNOWN_AGENT,
    forum_services,
    outcome,
    refused,
)


@pytest.fixture
async def main(services: Runtime) -> Runtime:
    await make_requester(services)
    return services


# --- the sub-agent checks, one by one ----------------------------------------------------------


@pytest.mark.parametrize("agent_id", ["-bad", "has space", "a" * 65, "bad/id", "ünï"])
async def test_invalid_agent_id(main: Runtime, agent_id: str) -> None:
    result = await refused(main, task="t", agentId=agent_id)
    assert result == {"status": "error", "error": INVALID_AGENT.format(agent_id)}


async def test_invalid_agent_id_is_quoted_trimmed(main: Runtime) -> None:
    result = await refused(main, task="t", agentId="  no good ")
    assert outcome(result) == ("error", INVALID_AGENT.format("no good"))


async def test_session_mode_without_thread(main: Runtime) -> None:
    for args in ({"mode": "session"}, {"mode": "session", "thread": False}):
        result = await refused(main, task="t", **args)
        assert result == {"status": "error", "error": SESSION_NEEDS_THREAD}


async def test_depth_limit_default(main: Runtime) -> None:
    child = (await accepted(main, task="t"))["childSessionKey"]
    result = await refused(main, child, task="deeper")
    assert result == {"status": "forbidden", "error": DEPTH.format(1, 1)}


async def test_depth_limit_at_the_configured_depth(make_services: MakeServices) -> None:
    services = await make_services(limits(maxSpawnDepth=2))
    await make_requester(services)
    child = (await accepted(services, task="t"))["childSessionKey"]
    grandchild = (await accepted(services, child, task="t"))["childSessionKey"]
    result = await refused(services, grandchild, task="t")
    assert result == {"status": "forbidden", "error": DEPTH.format(2, 2)}


async def test_max_active_children(make_services: MakeServices) -> None:
    services = await make_services(limits(maxChildrenPerAgent=2))
    await make_requester(services)
    gate = gated(services)
    await accepted(services, task="a")
    await accepted(services, task="b")
    result = await refused(services, task="c")
    assert result == {"status": "forbidden", "error": MAX_CHILDREN.format(2, 2)}
    gate.release.set()  # ended children no longer count
    await asyncio.wait_for(_no_active_children(services), 5)
    await accepted(services, task="c")


async def _no_active_children(services: Runtime) -> None:
    while services.store.runs.count_active(MAIN):
        await asyncio.sleep(0.005)


async def test_children_of_other_requesters_do_not_count(make_services: MakeServices) -> None:
    services = await make_services(limits(maxChildrenPerAgent=1))
    other = "agent:main:dashboard:other"
    await make_requester(services)
    await make_requester(services, other)
    gated(services)
    await accepted(services, other, task="theirs")
    await accepted(services, task="mine")
    assert outcome(await refused(services, other, task="again")) == (
        "forbidden",
        MAX_CHILDREN.format(1, 1),
    )


async def test_the_last_slot_is_checked_inside_the_transaction(
    make_services: MakeServices,
) -> None:
    """Concurrent spawns all pass the early check (the store thread is held until each of
    them has asked); only ``maxChildrenPerAgent`` of them may be created."""
    services = await make_services(limits(maxChildrenPerAgent=2))
    await make_requester(services)
    gated(services)
    held = threading.Event()
    before = services.workers.calls
    blocker = asyncio.ensure_future(services.call(held.wait, 5))
    spawns = [asyncio.ensure_future(spawn(services, task=f"t{n}")) for n in range(5)]
    # every spawn's first store call is queued behind the held store thread
    await eventually(lambda: services.workers.calls >= before + 1 + len(spawns))
    held.set()
    await blocker
    results = await asyncio.gather(*spawns)
    statuses = sorted(result["status"] for result in results)
    assert statuses == ["accepted", "accepted", "forbidden", "forbidden", "forbidden"]
    for result in results:
        if result["status"] == "forbidden":
            assert result == {"status": "forbidden", "error": MAX_CHILDREN.format(2, 2)}
    assert services.store.runs.count_active(MAIN) == 2
    assert len(descendants_of(services, MAIN)) == 2
    assert len(tasks_owned_by(services, MAIN)) == 2


async def test_require_agent_id(make_services: MakeServices) -> None:
    services = await make_services(limits(requireAgentId=True))
    await make_requester(services)
    result = await refused(services, task="t")
    assert result == {"status": "forbidden", "error": REQUIRE_AGENT_ID}
    await accepted(services, task="t", agentId="main")  # naming oneself is enough


@pytest.mark.parametrize(
    ("allow", "listed"),
    [
        (None, "none"),
        ([], "none"),
        (["critic"], "critic"),
        (["critic", "Scout", "critic"], "critic, scout"),
        (["rev-*"], "rev-*"),
    ],
)
async def test_agent_not_allowed(
    make_services: MakeServices, allow: list[str] | None, listed: str
) -> None:
    services = await make_services(limits() if allow is None else limits(allowAgents=allow))
    await make_requester(services)
    result = await refused(services, task="t", agentId="reviewer")
    assert result == {"status": "forbidden", "error": NOT_ALLOWED.format(listed)}


async def test_allow_agents_patterns_and_self(make_services: MakeServices) -> None:
    raw = limits(allowAgents=["rev*"])
    raw["agents"]["list"] = [{"id": "reviewer"}]
    services = await make_services(raw)
    await make_requester(services)
    gated(services)
    assert (await accepted(services, task="t", agentId="reviewer"))["childSessionKey"].startswith(
        "agent:reviewer:subagent:"
    )
    await accepted(services, task="t", agentId="MAIN")  # one's own agent is always allowed


async def test_per_agent_allow_agents_replace_the_defaults(make_services: MakeServices) -> None:
    raw = limits(allowAgents=["*"])
    raw["agents"]["list"] = [{"id": "main", "subagents": {"allowAgents": ["critic"]}}]
    services = await make_services(raw)
    await make_requester(services)
    result = await refused(services, task="t", agentId="reviewer")
    assert outcome(result) == ("forbidden", NOT_ALLOWED.format("critic"))


@pytest.mark.parametrize("allow", [["*"], ["rev*"], ["reviewer"]])
async def test_an_agent_nothing_defines_is_refused(
    make_services: MakeServices, allow: list[str]
) -> None:
    """The allowlist admits ``reviewer`` but no agent is defined by that id (spawn check
    6): OpenClaw's registry refusal, listing the targets that do exist."""
    raw = limits(allowAgents=allow)
    raw["agents"]["list"] = [{"id": "critic"}]
    services = await make_services(raw)
    await make_requester(services)
    result = await refused(services, task="t", agentId="Reviewer")
    allowed = "main, critic" if allow == ["*"] else "main"
    assert result == {"status": "forbidden", "error": UNKNOWN_AGENT.format("reviewer", allowed)}


async def test_sandbox_require(main: Runtime) -> None:
    result = await refused(main, task="t", sandbox="require")
    assert result == {"status": "forbidden", "error": SANDBOX_REQUIRE}
    await accepted(main, task="t", sandbox="inherit")


@pytest.mark.parametrize("level", ["extreme", "on", "maximum"])
async def test_invalid_thinking_level(main: Runtime, level: str) -> None:
    result = await refused(main, task="t", thinking=level)
    assert result == {"status": "error", "error": THINKING.format(level)}


async def test_unresolvable_model_is_skipped_with_a_warning(main: Runtime) -> None:
    result = await accepted(main, task="t", model="nowhere/model-x")
    assert result["modelApplied"] is False
    assert result["warning"] == (
        'model not applied: invalid model "nowhere/model-x": unknown provider "nowhere" '
        "(known: offline, openai, anthropic)"
    )
    child = main.store.get(result["childSessionKey"])
    assert child is not None
    assert "model" not in child.extra


async def test_thread_refusal_is_relayed(make_services: MakeServices) -> None:
    services = await forum_services(make_services, plain_channel("forum"))
    result = await refused(services, task="t", thread=True)
    assert result == {"status": "error", "error": NO_HOOKS}


# --- the order: two violations at once, the earlier rule speaks --------------------------------


async def _depth_one_requester(services: Runtime) -> str:
    """A child of main (depth 1) whose own spawns hit the default depth limit."""
    gated(services)
    result = await accepted(services, task="parent")
    return str(result["childSessionKey"])


async def test_order_invalid_agent_before_session_mode(main: Runtime) -> None:
    result = await refused(main, task="t", agentId="-x", mode="session")
    assert outcome(result) == ("error", INVALID_AGENT.format("-x"))


async def test_order_session_mode_before_depth(main: Runtime) -> None:
    child = await _depth_one_requester(main)
    result = await refused(main, child, task="t", mode="session")
    assert outcome(result) == ("error", SESSION_NEEDS_THREAD)


async def test_order_depth_before_max_children(make_services: MakeServices) -> None:
    services = await make_services(limits(maxChildrenPerAgent=1, maxSpawnDepth=2))
    await make_requester(services)
    gated(services)
    child = (await accepted(services, task="t"))["childSessionKey"]
    grandchild = (await accepted(services, child, task="t"))["childSessionKey"]
    assert outcome(await refused(services, child, task="t")) == (
        "forbidden",
        MAX_CHILDREN.format(1, 1),
    )
    assert outcome(await refused(services, grandchild, task="t")) == (
        "forbidden",
        DEPTH.format(2, 2),
    )


async def test_order_max_children_before_require_agent_id(make_services: MakeServices) -> None:
    services = await make_services(limits(maxChildrenPerAgent=1, requireAgentId=True))
    await make_requester(services)
    gated(services)
    await accepted(services, task="t", agentId="main")
    assert outcome(await refused(services, task="t")) == ("forbidden", MAX_CHILDREN.format(1, 1))


async def test_order_require_agent_id_before_allow_agents_and_the_rest(
    make_services: MakeServices,
) -> None:
    services = await make_services(limits(requireAgentId=True))
    await make_requester(services)
    result = await refused(services, task="t", sandbox="require", thinking="wild", model="x/y")
    assert outcome(result) == ("forbidden", REQUIRE_AGENT_ID)


async def test_order_allow_agents_before_sandbox(main: Runtime) -> None:
    result = await refused(main, task="t", agentId="reviewer", sandbox="require")
    assert outcome(result) == ("forbidden", NOT_ALLOWED.format("none"))


async def test_order_allow_agents_before_registry_before_sandbox(
    make_services: MakeServices,
) -> None:
    services = await make_services(limits(allowAgents=["critic"]))
    await make_requester(services)
    not_allowed = await refused(services, task="t", agentId="reviewer")
    assert outcome(not_allowed) == ("forbidden", NOT_ALLOWED.format("critic"))
    unknown = await refused(services, task="t", agentId="critic", sandbox="require")
    assert outcome(unknown) == ("forbidden", UNKNOWN_AGENT.format("critic", "main"))


async def test_order_sandbox_before_thinking(main: Runtime) -> None:
    result = await refused(main, task="t", sandbox="require", thinking="wild")
    assert outcome(result) == ("forbidden", SANDBOX_REQUIRE)


async def test_order_thinking_before_thread(make_services: MakeServices) -> None:
    services = await forum_services(make_services, plain_channel("forum"))
    result = await refused(services, task="t", thinking="wild", thread=True)
    assert outcome(result) == ("error", THINKING.format("wild"))


async def test_order_arguments_before_policy(main: Runtime) -> None:
    child = await _depth_one_requester(main)
    result = await refused(main, child, task="t", agentId="-x", cleanup="never")
    assert outcome(result) == ("error", 'cleanup must be "delete" or "keep"')
    result = await refused(main, child, task="t", agentId="-x")
    assert outcome(result) == ("error", INVALID_AGENT.format("-x"))
