"""sessions_send: arguments, the validation order and its strings, the round-1 results."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from clawline.agents.runner import RunContext
from clawline.agents.tools.base import Tool
from clawline.runtime import Runtime
from clawline.testing import FakeClock, drained, eventually
from clawline.testing.wire import WireRecorder
from tests.collab.conftest import MakeServices
from tests.collab.support import (
    MAIN,
    assistant_texts,
    config,
    invoke,
    runner_of,
    settle,
    tool_ctx,
    tool_of,
    transcript,
)

CHILD = "agent:main:subagent:child"
OTHER = "agent:main:dashboard:other"
FOREIGN = "agent:reviewer:main"
NOT_BOTH = "Provide either sessionKey or label (not both)."
REQUIRED = "Either sessionKey or label is required"
A2A_DISABLED = (
    "Agent-to-agent messaging is disabled. Set tools.agentToAgent.enabled=true to allow "
    "cross-agent sends."
)
A2A_DENIED = "Agent-to-agent messaging denied by tools.agentToAgent.allow."
TREE = (
    "Session send visibility is restricted to the current session tree "
    "(tools.sessions.visibility=tree)."
)
CROSS = (
    "Session send visibility is restricted. Set tools.sessions.visibility=all to allow "
    "cross-agent access."
)


def send(services: Runtime) -> Tool:
    return tool_of(services, "sessions_send")


async def family(services: Runtime) -> None:
    """main → child (labelled "helper"); an unrelated "other"; reviewer's main ("critic")."""
    catalog = services.catalog
    await services.call(catalog.patch, MAIN, {})
    await services.call(catalog.patch, CHILD, {"spawnedBy": MAIN, "label": "helper"})
    await services.call(catalog.patch, OTHER, {"label": "other"})
    await services.call(catalog.patch, FOREIGN, {"label": "critic"})


def check_error(details: dict[str, Any], status: str, error: str) -> None:
    assert (details["status"], details["error"]) == (status, error)
    run_id = details["runId"]
    assert isinstance(run_id, str)
    uuid.UUID(run_id)


# --- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({}, "message required"),
        ({"message": "   "}, "message required"),
        ({"message": 7}, "message required"),
        ({"message": "hi", "timeoutSeconds": -1}, "timeoutSeconds must be a number >= 0"),
        ({"message": "hi", "timeoutSeconds": True}, "timeoutSeconds must be a number >= 0"),
        ({"message": "hi", "timeoutSeconds": "5"}, "timeoutSeconds must be a number >= 0"),
        ({"message": "hi", "label": "x" * 513}, "label must be 1 to 512 characters"),
        (
            {"message": "hi", "label": "a", "agentId": "x" * 65},
            "agentId must be 1 to 64 characters",
        ),
        ({"message": "hi", "sessionKey": 3}, "sessionKey must be a string"),
    ],
)
async def test_schema_errors(services: Runtime, args: dict[str, object], error: str) -> None:
    details = await invoke(send(services), tool_ctx(services, MAIN), **args)
    check_error(details, "error", error)
    assert runner_of(services).calls == []


async def test_the_validation_order_and_its_strings(make_services: MakeServices) -> None:
    services = await make_services()
    await family(services)
    ctx = tool_ctx(services, MAIN)
    # no message beats everything else
    check_error(
        await invoke(send(services), ctx, sessionKey=CHILD, label="helper"),
        "error",
        "message required",
    )
    # both, even with a label that does not exist
    check_error(
        await invoke(send(services), ctx, message="m", sessionKey=CHILD, label="nope"),
        "error",
        NOT_BOTH,
    )
    # a cross-agent label lookup is refused by the A2A policy before the lookup
    check_error(
        await invoke(send(services), ctx, message="m", label="nope", agentId="reviewer"),
        "forbidden",
        A2A_DISABLED,
    )
    check_error(
        await invoke(send(services), ctx, message="m", label="nope"),
        "error",
        "No session found with label: nope",
    )
    check_error(await invoke(send(services), ctx, message="m"), "error", REQUIRED)
    check_error(
        await invoke(send(services), ctx, message="m", agentId="reviewer"), "error", REQUIRED
    )
    check_error(await invoke(send(services), ctx, message="m", sessionKey="   "), "error", REQUIRED)
    unknown = str(uuid.uuid4())
    check_error(
        await invoke(send(services), ctx, message="m", sessionKey=unknown),
        "error",
        f"Session not found: {unknown} (use the full sessionKey from sessions_list)",
    )
    check_error(
        await invoke(send(services), ctx, message="m", sessionKey="not-a-key"),
        "error",
        "Session not found: not-a-key (use the full sessionKey from sessions_list)",
    )
    refused = await invoke(send(services), ctx, message="m", label="other")
    check_error(refused, "forbidden", TREE)
    assert refused["sessionKey"] == OTHER
    refused = await invoke(send(services), ctx, message="m", sessionKey=FOREIGN)
    check_error(refused, "forbidden", CROSS)
    assert refused["sessionKey"] == FOREIGN
    assert runner_of(services).calls == []


async def test_every_result_has_a_fresh_run_id(services: Runtime) -> None:
    ctx = tool_ctx(services, MAIN)
    ids = {str((await invoke(send(services), ctx, message="m"))["runId"]) for _ in range(5)}
    assert len(ids) == 5


async def test_cross_agent_label_lookup_follows_the_allow_list(make_services: MakeServices) -> None:
    services = await make_services(config(visibility="all", a2a=True, allow=["main"]))
    await family(services)
    ctx = tool_ctx(services, MAIN)
    check_error(
        await invoke(send(services), ctx, message="m", label="critic", agentId="reviewer"),
        "forbidden",
        A2A_DENIED,
    )
    check_error(
        await invoke(send(services), ctx, message="m", sessionKey=FOREIGN), "forbidden", A2A_DENIED
    )
    services = await make_services(config(visibility="all", a2a=True, allow=["main", "rev*"]))
    await family(services)
    runner_of(services).script(FOREIGN, "noted")
    details = await invoke(
        send(services), tool_ctx(services, MAIN), message="m", label="critic", agentId="Reviewer"
    )
    assert (details["status"], details["reply"], details["sessionKey"]) == ("ok", "noted", FOREIGN)


async def test_a_label_is_looked_up_within_the_given_agent(make_services: MakeServices) -> None:
    services = await make_services(config(visibility="all", a2a=True))
    await family(services)
    ctx = tool_ctx(services, MAIN)
    check_error(
        await invoke(send(services), ctx, message="m", label="helper", agentId="reviewer"),
        "error",
        "No session found with label: helper",
    )
    details = await invoke(send(services), ctx, message="m", label="helper", agentId="main")
    assert (details["status"], details["sessionKey"]) == ("ok", CHILD)


async def test_a_session_id_names_its_session(services: Runtime) -> None:
    await family(services)
    child = services.store.get(CHILD)
    assert child is not None
    runner_of(services).script(CHILD, "by id")
    details = await invoke(
        send(services), tool_ctx(services, MAIN), message="m", sessionKey=child.session_id
    )
    assert (details["status"], details["reply"], details["sessionKey"]) == ("ok", "by id", CHILD)


# --- round 1 -----------------------------------------------------------------------------------


async def test_wait_mode_answers_with_the_reply(
    services: Runtime,
) -> None:
    await family(services)
    runner = runner_of(services)
    runner.script(CHILD, "pong")
    details = await invoke(
        send(services), tool_ctx(services, MAIN), message="ping", sessionKey=CHILD
    )
    assert details == {
        "runId": details["runId"],
        "status": "ok",
        "reply": "pong",
        "sessionKey": CHILD,
        "delivery": {"status": "pending", "mode": "announce"},
    }
    first = runner.calls[0]
    assert (first.session_key, first.message, first.run_id) == (CHILD, "ping", details["runId"])
    assert (first.origin, first.lane, first.deliver) == ("agent", "nested", False)
    assert first.extra == (
        "Agent-to-agent message context:\n"
        f"Agent 1 (requester) session: {MAIN}.\n"
        "Agent 1 (requester) channel: webchat.\n"
        f"Agent 2 (target) session: {CHILD}."
    )
    messages = transcript(services, CHILD)
    assert messages[0]["role"] == "user"
    assert assistant_texts(services, CHILD)[0] == "pong"
    await settle(services)


async def test_the_main_session_is_shown_as_main(services: Runtime) -> None:
    await family(services)
    runner_of(services).script(MAIN, "hello child")
    details = await invoke(
        send(services), tool_ctx(services, CHILD), message="hi", sessionKey="main"
    )
    assert details["status"] == "forbidden"  # a child's tree does not hold its parent
    assert details["sessionKey"] == "main"


async def test_wait_mode_times_out(make_services: MakeServices) -> None:
    clock = FakeClock()
    services = await make_services(clock=clock)
    await family(services)
    release = asyncio.Event()

    async def slow(ctx: RunContext) -> str:
        await release.wait()
        return "late"

    runner_of(services).script(CHILD, slow)
    sending = asyncio.create_task(
        invoke(
            send(services),
            tool_ctx(services, MAIN),
            message="ping",
            sessionKey=CHILD,
            timeoutSeconds=1,
        )
    )
    start = clock.now_ms()
    await eventually(lambda: services.runs.has_active_run(CHILD))
    # the wait runs on the runtime's clock (virtual time here): advance it once the tool waits
    await eventually(lambda: clock.next_deadline == start + 1000)
    await clock.run_for(999)
    await drained(services)
    assert not sending.done()
    await clock.run_for(1)
    details = await asyncio.wait_for(sending, 5)
    assert details == {
        "runId": details["runId"],
        "status": "timeout",
        "error": f"No reply within 1s; the run goes on in {CHILD}.",
        "sessionKey": CHILD,
    }
    assert services.runs.has_active_run(CHILD)
    release.set()
    await asyncio.wait_for(services.runs.wait_outcome(str(details["runId"]), 5000), 5)
    assert services.runs.background_tasks() == []  # no exchange follows a timeout


async def test_wait_mode_reports_a_failed_run(services: Runtime) -> None:
    await family(services)

    async def broken(ctx: RunContext) -> str:
        raise RuntimeError("model exploded")

    runner_of(services).script(CHILD, broken)
    details = await invoke(
        send(services), tool_ctx(services, MAIN), message="ping", sessionKey=CHILD
    )
    assert details == {
        "runId": details["runId"],
        "status": "error",
        "error": "model exploded",
        "sessionKey": CHILD,
    }
    assert services.runs.background_tasks() == []


async def test_the_reply_is_that_runs_even_when_others_answer_later(services: Runtime) -> None:
    """The reply comes from the run the send started, not from the newest assistant message
    (OpenClaw #76443): here the target answers another message right after ours."""
    await family(services)
    runner = runner_of(services)
    gate = asyncio.Event()

    async def ours(ctx: RunContext) -> str:
        await gate.wait()
        return "the answer to ping"

    runner.script(CHILD, ours, "the answer to the user")
    sending = asyncio.create_task(
        invoke(send(services), tool_ctx(services, MAIN), message="ping", sessionKey=CHILD)
    )
    while not runner.calls_on(CHILD):
        await asyncio.sleep(0.01)
    user = await services.runs.send(session_key=CHILD, message="from a user", idempotency_key="u1")
    gate.set()
    details = await sending
    await user.done
    assert details["reply"] == "the answer to ping"
    assert assistant_texts(services, CHILD)[-1] == "the answer to the user"
    await settle(services)


async def test_fire_and_forget_answers_at_once(
    services: Runtime,
) -> None:
    await family(services)
    runner = runner_of(services)
    release = asyncio.Event()

    async def slow(ctx: RunContext) -> str:
        await release.wait()
        return "done later"

    runner.script(CHILD, slow, "ANNOUNCE_SKIP")
    runner.script(MAIN, "REPLY_SKIP")
    details = await invoke(
        send(services), tool_ctx(services, MAIN), message="work", sessionKey=CHILD, timeoutSeconds=0
    )
    assert details == {
        "runId": details["runId"],
        "status": "accepted",
        "sessionKey": CHILD,
        "delivery": {"status": "pending", "mode": "announce"},
    }
    assert len(services.runs.background_tasks()) == 1
    release.set()
    await settle(services)
    # the exchange went on: round 1, a requester step, the announce step on the target
    sessions = [(call.session_key, call.message) for call in runner.calls]
    assert sessions == [
        (CHILD, "work"),
        (MAIN, "done later"),
        (CHILD, "Agent-to-agent announce step."),
    ]


async def test_fire_and_forget_steps_time_out_after_30_s(services: Runtime) -> None:
    await family(services)
    runner = runner_of(services)
    runner.script(CHILD, "r1", "ANNOUNCE_SKIP")
    runner.script(MAIN, "REPLY_SKIP")
    seen: list[int] = []
    original = services.runs.send

    async def spy(**kwargs: object) -> object:
        seen.append(kwargs.get("timeout_ms"))  # type: ignore[arg-type]
        return await original(**kwargs)  # type: ignore[arg-type]

    services.runs.send = spy  # type: ignore[method-assign,assignment]
    await invoke(
        send(services), tool_ctx(services, MAIN), message="m", sessionKey=CHILD, timeoutSeconds=0
    )
    await settle(services)
    assert seen == [None, 30_000, 30_000]


async def test_a_refused_send_publishes_nothing(services: Runtime) -> None:
    await family(services)
    async with WireRecorder(services) as seen:
        await invoke(send(services), tool_ctx(services, MAIN), message="m", sessionKey=OTHER)
        await seen.settled()
    assert seen.events == []
    assert transcript(services, OTHER) == []
