"""The lifecycle hooks through a real gateway: when each fires and the shape of its event and
context; ``subagent_spawning`` refusing a spawn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clawline.plugins import HookContext
from tests.plugins.plugin_support import (
    SAMPLES,
    connected,
    plugin_gateway,
    plugin_settings,
    run_to_end,
    wait_for,
)
from tests.plugins.sample_plugins import recorder

MAIN = "agent:main:main"


def _ctx(ctx: HookContext) -> tuple[Any, ...]:
    return (ctx.plugin_id, ctx.session_key, ctx.run_id, ctx.agent_id, dict(ctx.config))


async def test_session_start_agent_end_and_session_end(tmp_path: Path) -> None:
    recorder.reset()
    settings = plugin_settings(
        tmp_path / "state",
        f"{SAMPLES}:recorder",
        entries={"recorder": {"config": {"greeting": "hi"}}},
    )
    async with plugin_gateway(settings) as gw, connected(gw) as client:
        services = gw.runtime
        assert [name for name, _, _ in recorder.calls] == ["startup"]
        [(_, _, startup_ctx)] = recorder.calls
        assert startup_ctx.host is services.plugin_host
        await run_to_end(client, "main", "hello", "run-1")
        await wait_for(lambda: recorder.of("agent_end"))
        first_id = services.store.get(MAIN).session_id  # type: ignore[union-attr]

        [(start, start_ctx)] = recorder.of("session_start")
        assert start == {"sessionKey": MAIN, "sessionId": first_id, "runId": "run-1"}
        assert _ctx(start_ctx) == ("recorder", MAIN, "run-1", "main", {"greeting": "hi"})
        assert start_ctx.host is services.plugin_host

        [(end, end_ctx)] = recorder.of("agent_end")
        assert _ctx(end_ctx) == ("recorder", MAIN, "run-1", "main", {"greeting": "hi"})
        assert isinstance(end.pop("durationMs"), int)
        messages = end.pop("messages")
        assert end == {
            "sessionKey": MAIN,
            "sessionId": first_id,
            "runId": "run-1",
            "success": True,
            "status": "done",
            "output": "echo: hello",
        }
        assert [(m["role"], m["content"][0]["text"]) for m in messages] == [
            ("user", "hello"),
            ("assistant", "echo: hello"),
        ]
        assert all(m["runId"] == "run-1" for m in messages)

        # A second run of the same incarnation is no session start.
        await run_to_end(client, "main", "fail: on purpose", "run-2")
        await wait_for(lambda: len(recorder.of("agent_end")) == 2)
        assert len(recorder.of("session_start")) == 1
        failed, _ = recorder.of("agent_end")[1]
        assert (failed["success"], failed["status"], failed["error"]) == (
            False,
            "failed",
            "on purpose",
        )
        assert [m["role"] for m in failed["messages"]] == ["user"]

        await client.ok("sessions.reset", {"key": "main"})
        [(reset, reset_ctx)] = recorder.of("session_end")
        assert reset == {"sessionKey": MAIN, "sessionId": first_id, "reason": "reset"}
        assert _ctx(reset_ctx) == ("recorder", MAIN, None, "main", {"greeting": "hi"})

        await run_to_end(client, "main", "after reset", "run-3")
        second_id = services.store.get(MAIN).session_id  # type: ignore[union-attr]
        assert second_id != first_id
        assert [e["sessionId"] for e, _ in recorder.of("session_start")] == [first_id, second_id]

        await client.ok("sessions.create", {"key": "side"})
        await client.ok("sessions.delete", {"key": "side", "emitLifecycleHooks": False})
        await client.ok("sessions.create", {"key": "other"})
        other_id = services.store.get("agent:main:other").session_id  # type: ignore[union-attr]
        await client.ok("sessions.delete", {"key": "other"})
        ends = [event for event, _ in recorder.of("session_end")]
        assert ends[1:] == [
            {"sessionKey": "agent:main:other", "sessionId": other_id, "reason": "deleted"}
        ]


async def test_subagent_hooks(tmp_path: Path) -> None:
    recorder.reset()
    settings = plugin_settings(tmp_path / "state", f"{SAMPLES}:recorder")
    async with plugin_gateway(settings) as gw, connected(gw) as client:
        await run_to_end(client, "main", "spawn helper: reply: child done", "run-1")
        await wait_for(lambda: recorder.of("subagent_ended"))
        [(spawning, spawning_ctx)] = recorder.of("subagent_spawning")
        child = spawning["childSessionKey"]
        assert spawning == {
            "requesterSessionKey": MAIN,
            "childSessionKey": child,
            "agentId": "main",
            "label": "helper",
            "mode": "run",
            "runtime": "subagent",
            "task": "reply: child done",
        }
        assert (spawning_ctx.session_key, spawning_ctx.run_id) == (MAIN, "run-1")
        [(spawned, spawned_ctx)] = recorder.of("subagent_spawned")
        [record] = gw.runtime.store.runs.by_child(child)
        assert spawned == {
            "requesterSessionKey": MAIN,
            "childSessionKey": child,
            "agentId": "main",
            "label": "helper",
            "mode": "run",
            "runtime": "subagent",
            "runId": record.run_id,
        }
        assert (spawned_ctx.session_key, spawned_ctx.run_id) == (child, record.run_id)
        [(ended, ended_ctx)] = recorder.of("subagent_ended")
        assert ended == {
            "requesterSessionKey": MAIN,
            "childSessionKey": child,
            "runId": record.run_id,
            "outcome": "ok",
            "targetKind": "subagent",
        }
        assert (ended_ctx.session_key, ended_ctx.agent_id) == (child, "main")
        starts = [event["sessionKey"] for event, _ in recorder.of("session_start")]
        assert starts[:2] == [MAIN, child]


async def test_a_failed_child_ends_with_outcome_error(tmp_path: Path) -> None:
    recorder.reset()
    settings = plugin_settings(tmp_path / "state", f"{SAMPLES}:recorder")
    async with plugin_gateway(settings) as gw, connected(gw) as client:
        await run_to_end(client, "main", "spawn: fail: child broke", "run-1")
        await wait_for(lambda: recorder.of("subagent_ended"))
        [(ended, _)] = recorder.of("subagent_ended")
        assert (ended["outcome"], ended["error"]) == ("error", "child broke")
        assert gw.gateway.ready


async def test_subagent_spawning_refusal_refuses_the_spawn(tmp_path: Path) -> None:
    recorder.reset()
    settings = plugin_settings(tmp_path / "state", f"{SAMPLES}:refuser", f"{SAMPLES}:recorder")
    async with plugin_gateway(settings) as gw, connected(gw) as client:
        await run_to_end(client, "main", "spawn: forbidden work", "run-1")
        assert gw.runtime.store.children(MAIN) == []
        assert gw.runtime.store.runs.for_requester(MAIN) == []
        history = await client.ok("chat.history", {"sessionKey": "main"})
        results = [m for m in history["messages"] if m["role"] in ("tool", "toolResult")]
        [result] = results
        text = result["content"][0]["text"]
        assert '"status":"error"' in text.replace(" ", "")
        assert f"no spawning from {MAIN}" in text
        assert recorder.of("subagent_spawned") == []

        # The refuser answers other tasks with a non-refusal: the spawn goes ahead.
        await run_to_end(client, "main", "spawn: allowed work", "run-2")
        assert len(gw.runtime.store.children(MAIN)) == 1
        await wait_for(lambda: recorder.of("subagent_spawned"))
