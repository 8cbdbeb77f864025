"""``streamTo: "parent"``: the child's output is relayed into the requester's session and logged
to ``streamLogPath``; the run is not tracked in the sub-agent registry and not announced."""

from __future__ import annotations

import json
from pathlib import Path

from clawline.runtime import Runtime
from tests.acp_runtime.conftest import Acp
from tests.acp_runtime.support import MAIN, eventually, spawn
from tests.collab.support import transcript


def relayed(services: Runtime) -> list[str]:
    out: list[str] = []
    for message in transcript(services, MAIN):
        if message.get("label") == "acp:tiny" and message.get("injected") is True:
            content = message["content"]
            assert isinstance(content, list)
            block = content[0]
            assert isinstance(block, dict)
            out.append(str(block["text"]))
    return out


def task_status(services: Runtime, child: str) -> tuple[str, str]:
    (task,) = services.tasks.for_session(child)
    return task.status, task.delivery_status


async def test_output_is_relayed_to_the_parent(acp: Acp) -> None:
    services = acp.services
    result = await spawn(services, task="hello", agentId="tiny", streamTo="parent")
    child = result["childSessionKey"]
    log = Path(result["streamLogPath"])
    assert result == {
        "status": "accepted",
        "childSessionKey": child,
        "runId": result["runId"],
        "mode": "run",
        "streamLogPath": str(log),
    }
    entry = services.store.get(child)
    assert entry is not None
    assert log == services.settings.state_dir / "acp" / "streams" / (
        f"{entry.session_id}.acp-stream.jsonl"
    )
    assert log.exists()  # the start is logged before the spawn answers
    await eventually(lambda: task_status(services, child) == ("succeeded", "delivered"))
    assert relayed(services) == [
        f"tiny: started {child}; its output is relayed here.",
        "tiny: tiny heard: hello",
        "tiny: [tool] echo (started)",
        "tiny: [tool] echo (completed)",
        "tiny: done.",
        "tiny run completed.",
    ]
    # not tracked in the sub-agent registry, and no completion event for the requester
    assert services.store.runs.by_child(child) == []
    assert acp.runner.calls_on(MAIN) == []
    assert services.store.inbox.pending_for(MAIN) == []

    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert {line["childSessionKey"] for line in lines} == {child}
    assert {line["runId"] for line in lines} == {result["runId"]}
    events = [line["event"] for line in lines]
    assert events[0] == "start"
    assert events[-1] == "end"
    assert lines[-1]["status"] == "done"
    text = "".join(line["text"] for line in lines if line["event"] == "text")
    assert text == "tiny heard: hello done."
    tools = [(line["title"], line["status"]) for line in lines if line["event"] == "tool"]
    assert tools == [("echo", "started"), ("echo", "completed")]
    # the child's own transcript has the output too
    assert transcript(services, child)[-1]["role"] == "assistant"


async def test_a_failed_run_is_relayed_with_its_error(acp: Acp) -> None:
    services = acp.services
    result = await spawn(services, task="fail: boom", agentId="tiny", streamTo="parent")
    child = result["childSessionKey"]
    await eventually(lambda: task_status(services, child)[0] == "failed")
    assert relayed(services)[-1] == "tiny run failed: boom"
    (task,) = services.tasks.for_session(child)
    assert task.error == "boom"
    entry = services.store.get(child)
    assert entry is not None
    assert entry.status == "failed"
