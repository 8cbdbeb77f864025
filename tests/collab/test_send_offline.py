"""sessions_send end to end: the real turn loop and the offline model drive both sessions."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from clawline.runtime import Runtime
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, assistant_texts, settle, transcript

HELPER = "agent:main:subagent:helper"


async def setup(make_services: MakeServices) -> Runtime:
    services = await make_services(scripted=False)
    await services.call(services.catalog.patch, MAIN, {})
    await services.call(services.catalog.patch, HELPER, {"spawnedBy": MAIN, "label": "helper"})
    return services


def tool_results(services: Runtime, key: str) -> list[Mapping[str, Any]]:
    results = []
    for message in transcript(services, key):
        details = message.get("details")
        if message.get("name") == "sessions_send" and isinstance(details, Mapping):
            results.append(details)
    return results


async def test_a_turn_sends_by_label_and_gets_the_reply(make_services: MakeServices) -> None:
    services = await setup(make_services)
    ack = await services.runs.send(
        session_key=MAIN, message="send helper: reply: pong", idempotency_key="turn-1"
    )
    outcome = await asyncio.wait_for(asyncio.shield(ack.done), 20)
    assert outcome.status == "done"
    await settle(services)
    results = tool_results(services, MAIN)
    assert len(results) == 1
    assert (results[0]["status"], results[0]["reply"]) == ("ok", "pong")
    assert results[0]["sessionKey"] == HELPER
    # round 1 on the helper; the offline model ends the ping-pong (REPLY_SKIP on the
    # requester) and stays silent in the announce step (ANNOUNCE_SKIP): nothing is posted
    assert assistant_texts(services, HELPER) == ["pong", "ANNOUNCE_SKIP"]
    assert "REPLY_SKIP" in assistant_texts(services, MAIN)
    assert not [m for m in transcript(services, HELPER) if m.get("a2aAnnounce")]
    entry = services.store.get(MAIN)
    assert entry is not None
    assert entry.status == "done"


async def test_a_refused_send_is_a_tool_result(make_services: MakeServices) -> None:
    services = await setup(make_services)
    ack = await services.runs.send(
        session_key=MAIN, message="send nobody: hello", idempotency_key="turn-1"
    )
    outcome = await asyncio.wait_for(asyncio.shield(ack.done), 20)
    assert outcome.status == "done"
    results = tool_results(services, MAIN)
    assert [(r["status"], r["error"]) for r in results] == [
        ("error", "No session found with label: nobody")
    ]
