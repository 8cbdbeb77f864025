"""Routing by origin: the gateway's ``agent`` with ``deliver`` and a conversation, a session's
remembered origin, ``sessions.patch`` of the ``last*`` fields, a completion answered to the
requester's channel, and an announce result posted to the target's channel — each seen on the
webhook channel's real receiver."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clawline.collab.a2a import deliver_announce
from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.testing import eventually
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.testing.webhook_receiver import WebhookReceiver
from tests.gateway.wire import WireClient


@dataclass
class Routed:
    gateway: RunningGateway
    receiver: WebhookReceiver
    client: WireClient

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        frame = await self.client.call(method, params)
        assert frame["ok"] is True, frame
        payload: dict[str, Any] = frame["payload"]
        return payload


@pytest.fixture
async def routed(tmp_path: Path) -> AsyncIterator[Routed]:
    async with WebhookReceiver() as receiver:
        raw = {"channels": {"webhook": {"url": receiver.url, "inboundToken": "t"}}}
        settings = Settings(state_dir=tmp_path / "state", raw=raw)
        async with running_gateway(
            tmp_path / "state", settings=settings, gateway_settings=GatewaySettings(port=0)
        ) as gateway:
            client = await WireClient.open(gateway.url)
            try:
                assert (await client.connect())["ok"] is True
                yield Routed(gateway, receiver, client)
            finally:
                await client.close()


def _agent(message: str, **extra: Any) -> dict[str, Any]:
    return {"message": message, "idempotencyKey": str(uuid.uuid4()), **extra}


async def test_agent_with_deliver_and_a_conversation_posts_the_reply_there(
    routed: Routed,
) -> None:
    params = _agent(
        "reply: to carol", sessionKey="agent:main:main", deliver=True, channel="webhook", to="carol"
    )
    await routed.call("agent", params)
    post = await routed.receiver.wait_for(lambda post: post.body["to"] == "carol")
    assert post.body["text"] == "to carol"
    entry = await routed.gateway.runtime.call(routed.gateway.runtime.catalog.get, "main")
    assert entry is not None
    assert (entry.extra["lastChannel"], entry.extra["lastTo"]) == ("webhook", "carol")
    # deliver again without naming the conversation: the remembered origin
    await routed.call("agent", _agent("reply: again", sessionKey="agent:main:main", deliver=True))
    await routed.receiver.wait_for(lambda post: post.body["text"] == "again")


async def test_agent_without_deliver_posts_nothing(routed: Routed) -> None:
    await routed.call(
        "agent", _agent("reply: kept", sessionKey="agent:main:main", channel="webhook", to="dan")
    )
    runtime = routed.gateway.runtime
    await eventually(lambda: not runtime.runs.busy)
    assert routed.receiver.posts == []
    assert runtime.store.outbox.page(None, None, 10) == []


async def test_sessions_patch_sets_the_origin_fields(routed: Routed) -> None:
    answer = await routed.call(
        "sessions.patch",
        {
            "key": "agent:main:main",
            "lastChannel": "webhook",
            "lastTo": "erin",
            "lastThreadId": None,
        },
    )
    assert answer["entry"]["lastChannel"] == "webhook"
    await routed.call(
        "agent", _agent("reply: via patch", sessionKey="agent:main:main", deliver=True)
    )
    post = await routed.receiver.wait_for(lambda post: post.body["text"] == "via patch")
    assert post.body["to"] == "erin"


async def test_a_childs_completion_is_answered_to_the_requesters_channel(routed: Routed) -> None:
    """The requester lives on the webhook channel; its child's completion starts the
    requester's turn, and that turn's answer is posted to the requester's conversation."""
    key = "agent:main:webhook:direct:frank"
    await routed.call("sessions.patch", {"key": key, "lastChannel": "webhook", "lastTo": "frank"})
    await routed.call("agent", _agent("spawn: reply: child result", sessionKey=key, deliver=True))
    runtime = routed.gateway.runtime
    await eventually(
        lambda: any("child result" in post.body["text"] for post in routed.receiver.delivered),
        timeout=20,
    )
    kinds = sorted(row.kind for row in runtime.store.outbox.page(None, None, 20))
    assert kinds == ["completion", "reply"]  # the completion turn's answer, the spawn turn's
    assert all(post.body["to"] == "frank" for post in routed.receiver.delivered)


async def test_an_announce_result_is_posted_to_the_targets_channel(routed: Routed) -> None:
    runtime = routed.gateway.runtime
    key = "agent:ops:webhook:group:room-9"
    await runtime.call(runtime.catalog.patch, key, {"lastChannel": "webhook", "lastTo": "room-9"})
    await deliver_announce(
        key, "the exchange is over", catalog=runtime.catalog, workers=runtime.workers
    )
    post = await routed.receiver.wait_for(lambda post: post.body["kind"] == "announce")
    assert (post.body["to"], post.body["text"]) == ("room-9", "the exchange is over")


async def test_send_queues_an_explicit_message_once(routed: Routed) -> None:
    params = {"channel": "webhook", "to": "gina", "message": "hello gina", "idempotencyKey": "k1"}
    first = await routed.call("send", params)
    assert first["status"] == "queued"
    again = await routed.call("send", params)
    assert again == {"status": "duplicate"}
    post = await routed.receiver.wait_for(lambda post: post.body["to"] == "gina")
    assert (post.body["text"], post.body["kind"], post.body["id"]) == (
        "hello gina",
        "send",
        first["id"],
    )
    await eventually(lambda: len(routed.receiver.delivered) == 1)


async def test_send_to_an_unknown_channel_is_refused(routed: Routed) -> None:
    frame = await routed.client.call(
        "send", {"channel": "sms", "to": "+1", "message": "x", "idempotencyKey": "k2"}
    )
    assert frame["ok"] is False
    assert frame["error"]["message"] == "unknown channel: sms (configured: webhook)"
    assert routed.gateway.runtime.store.outbox.page(None, None, 10) == []
