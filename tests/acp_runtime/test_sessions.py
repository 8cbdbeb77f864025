"""Resuming an agent's session (``resumeSessionId`` → ``session/load``), persistent
``mode: "session"`` children that keep their process for follow-ups, and follow-ups to oneshot
children (the agent is started again and loads the session)."""

from __future__ import annotations

from typing import Any

from clawline.events import SessionChanged
from clawline.runtime import Runtime
from tests.acp_runtime.conftest import Acp, MakeAcp
from tests.acp_runtime.support import MAIN, alive, calls, eventually, gone, pids, spawn
from tests.collab.support import assistant_texts, transcript

THREADS = {"channels": {"webchat": {"threadBindings": {"spawnAcpSessions": True}}}}
SESSION_NOTE = (
    "thread-bound ACP session stays active after this task; continue in-thread for follow-ups."
)
RUN_THREAD_NOTE = (
    "initial ACP task queued in isolated session; follow-ups continue in the bound thread."
)


def task_status(services: Runtime, child: str) -> str:
    (task,) = [t for t in services.tasks.for_session(child) if t.child_session_key == child]
    return task.status


def replies(services: Runtime, child: str) -> list[str]:
    """The child's assistant replies (its tool-call messages have no text)."""
    return [text for text in assistant_texts(services, child) if text]


async def send(services: Runtime, child: str, message: str, key: str) -> Any:
    ack = await services.runs.send(session_key=child, message=message, idempotency_key=key)
    return await ack.done


async def test_resume_session_id_loads_the_agent_session(acp: Acp) -> None:
    services = acp.services
    result = await spawn(services, task="go on", agentId="tiny", resumeSessionId="old-7")
    child = result["childSessionKey"]
    await eventually(lambda: task_status(services, child) == "succeeded")
    (loaded,) = calls(acp.log, "session/load")
    assert loaded == {"cwd": str(services.settings.state_dir.resolve()), "sessionId": "old-7"}
    assert calls(acp.log, "session/new") == []
    (prompted,) = calls(acp.log, "session/prompt")
    assert prompted["sessionId"] == "old-7"
    entry = services.store.get(child)
    assert entry is not None
    meta = entry.extra["acp"]
    assert isinstance(meta, dict)
    assert meta["acpSessionId"] == "old-7"
    # the replayed history is not part of the child's run
    assert replies(services, child) == ["tiny heard: go on done."]
    assert all("old" not in str(message) for message in transcript(services, child))
    (load,) = acp.traffic.sent("session/load")
    assert load["mcpServers"] == []


async def test_session_mode_keeps_the_process_for_follow_ups(make_acp: MakeAcp) -> None:
    acp = await make_acp(extra=THREADS)
    services = acp.services
    result = await spawn(services, task="first", agentId="tiny", thread=True)
    assert (result["status"], result["mode"], result["note"]) == (
        "accepted",
        "session",
        SESSION_NOTE,
    )
    child = result["childSessionKey"]
    await eventually(lambda: task_status(services, child) == "succeeded")
    (pid,) = pids(acp.log)
    assert alive(pid)
    live = services.acp.child(child)
    assert live is not None
    assert live.mode == "persistent"
    # bound to its thread, tracked, but not announced (its output belongs to the thread)
    (binding,) = services.store.bindings.for_session(child)
    assert binding.channel == "webchat"
    (record,) = services.store.runs.by_child(child)
    assert record.spawn_mode == "session"
    assert record.cleanup == "keep"
    assert services.store.inbox.pending_for(MAIN) == []
    (task,) = services.tasks.for_session(child)
    assert task.delivery_status == "not_applicable"

    outcome = await send(services, child, "second", "follow-1")
    assert outcome.status == "done"
    assert outcome.text == "tiny heard: second done."
    assert pids(acp.log) == [pid]  # the same process answered
    prompts = calls(acp.log, "session/prompt")
    assert [p["text"] for p in prompts] == ["first", "second"]
    assert len({p["sessionId"] for p in prompts}) == 1
    assert replies(services, child) == [
        "tiny heard: first done.",
        "tiny heard: second done.",
    ]

    # deleting the session stops its agent
    change = await services.call(services.catalog.delete, child)
    services.events.publish(SessionChanged(child, "delete", deleted=change.before))
    await gone(pid)
    assert services.acp.child(child) is None


async def test_thread_bound_run_mode_has_its_note(make_acp: MakeAcp) -> None:
    acp = await make_acp(extra=THREADS)
    result = await spawn(acp.services, task="t", agentId="tiny", thread=True, mode="run")
    assert (result["mode"], result["note"]) == ("run", RUN_THREAD_NOTE)
    await eventually(lambda: task_status(acp.services, result["childSessionKey"]) == "succeeded")


async def test_a_follow_up_to_a_oneshot_child_reloads_its_session(acp: Acp) -> None:
    services = acp.services
    result = await spawn(services, task="one", agentId="tiny")
    child = result["childSessionKey"]
    await eventually(lambda: task_status(services, child) == "succeeded")
    (first,) = pids(acp.log)
    await gone(first)
    outcome = await send(services, child, "two", "again-1")
    assert outcome.status == "done"
    assert outcome.text == "tiny heard: two done."
    first_pid, second_pid = pids(acp.log)
    assert first_pid == first
    (opened,) = calls(acp.log, "session/new")
    (loaded,) = calls(acp.log, "session/load")
    assert loaded["sessionId"] == opened["sessionId"]
    await gone(second_pid)  # oneshot again


async def test_a_follow_up_needs_session_load_once_the_process_is_gone(make_acp: MakeAcp) -> None:
    acp = await make_acp(env={"TINY_LOAD": "0"})
    services = acp.services
    result = await spawn(services, task="one", agentId="tiny")
    child = result["childSessionKey"]
    await eventually(lambda: task_status(services, child) == "succeeded")
    outcome = await send(services, child, "two", "again-1")
    assert outcome.status == "failed"
    assert outcome.error == (
        f"ACP session {child} cannot be reopened: ACP agent does not support session/load"
    )


async def test_a_plain_session_with_an_acp_key_keeps_the_default_runner(acp: Acp) -> None:
    outcome = await send(acp.services, "agent:main:acp:plain", "hi", "plain-1")
    assert outcome.status == "done"
    assert acp.runner.calls_on("agent:main:acp:plain")
    assert pids(acp.log) == []


async def test_an_agent_to_agent_step_reaches_the_acp_child_with_its_instructions(
    make_acp: MakeAcp,
) -> None:
    """ACP has no system prompt: a step's instructions open the prompt, so the child can answer
    ``REPLY_SKIP`` / ``ANNOUNCE_SKIP`` like a native child; an ordinary turn stays bare."""
    acp = await make_acp(extra=THREADS)
    services = acp.services
    result = await spawn(services, task="first", agentId="tiny", thread=True)
    child = result["childSessionKey"]
    await eventually(lambda: task_status(services, child) == "succeeded")
    step = (
        "Agent-to-agent reply step:\nCurrent agent: Agent 2 (target)\nTurn 1 of 5.\n"
        'If you want to stop the ping-pong, reply exactly "REPLY_SKIP".'
    )
    ack = await services.runs.send(
        session_key=child,
        message="are we done?",
        idempotency_key="step-1",
        extra_system_prompt=step,
        bypass_queue=True,
    )
    await ack.done
    ack = await services.runs.send(
        session_key=child,
        message="plain",
        idempotency_key="plain-1",
        extra_system_prompt="You are a careful reviewer.",
    )
    await ack.done
    texts = [prompt["text"] for prompt in calls(acp.log, "session/prompt")]
    assert texts == ["first", f"{step}\n\nare we done?", "plain"]
