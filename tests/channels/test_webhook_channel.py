"""The webhook channel end to end on a real gateway: an inbound POST becomes a run of the
conversation's session, the reply is POSTed back through the outbox (once, across 429 and 500),
a dead receiver ends as a failed outbox row, and a thread spawn is refused as on every channel
without threads."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from clawline.channels.thread_bindings.planner import ThreadPlanner, ThreadRefusal
from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.testing import eventually
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.testing.webhook_receiver import WebhookReceiver

TOKEN = "inbound-secret-1"


@dataclass
class Webhook:
    gateway: RunningGateway
    receiver: WebhookReceiver
    http: httpx.AsyncClient

    async def post(self, body: dict[str, Any], token: str | None = TOKEN) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        return await self.http.post(
            f"{self.gateway.http_url}/channels/webhook", json=body, headers=headers
        )

    def outbox(self) -> list[Any]:
        runtime = self.gateway.runtime
        return runtime.store.outbox.page(None, None, 100)


@pytest.fixture
async def webhook(tmp_path: Path) -> AsyncIterator[Webhook]:
    async with WebhookReceiver() as receiver:
        raw = {"channels": {"webhook": {"url": receiver.url, "inboundToken": TOKEN}}}
        settings = Settings(state_dir=tmp_path / "state", raw=raw)
        async with (
            running_gateway(
                tmp_path / "state", settings=settings, gateway_settings=GatewaySettings(port=0)
            ) as gateway,
            httpx.AsyncClient() as http,
        ):
            yield Webhook(gateway, receiver, http)


def message(text: str, message_id: str = "m1", **extra: Any) -> dict[str, Any]:
    return {"to": "alice", "from": "alice", "text": text, "messageId": message_id, **extra}


async def test_an_inbound_message_is_answered_by_a_post_back(webhook: Webhook) -> None:
    answer = await webhook.post(message("reply: hello from the agent"))
    assert answer.status_code == 202, answer.text
    body = answer.json()
    assert body["sessionKey"] == "agent:main:webhook:direct:alice"
    post = await webhook.receiver.wait_for(lambda post: post.body["to"] == "alice")
    assert post.body["text"] == "hello from the agent"
    assert post.body["sessionKey"] == "agent:main:webhook:direct:alice"
    assert post.headers["idempotency-key"] == f"clawline-outbox-{post.body['id']}"
    entry = await webhook.gateway.runtime.call(
        webhook.gateway.runtime.catalog.get, "agent:main:webhook:direct:alice"
    )
    assert entry is not None
    assert (entry.extra["lastChannel"], entry.extra["lastTo"]) == ("webhook", "alice")
    await eventually(lambda: [row.status for row in webhook.outbox()] == ["delivered"])
    [row] = webhook.outbox()
    assert row.remote_id == "hook-1"


async def test_the_same_message_id_runs_once(webhook: Webhook) -> None:
    first = await webhook.post(message("reply: once", "same"))
    again = await webhook.post(message("reply: once", "same"))
    assert first.json()["runId"] == again.json()["runId"]
    await webhook.receiver.wait_for(lambda post: post.body["text"] == "once")
    await eventually(lambda: all(row.status == "delivered" for row in webhook.outbox()))
    assert len(webhook.outbox()) == 1
    assert [post.body["text"] for post in webhook.receiver.delivered] == ["once"]


async def test_429_then_500_then_success_is_delivered_once(webhook: Webhook) -> None:
    webhook.receiver.answer_next([429, 500])
    await webhook.post(message("reply: persistent", "m2"))
    await webhook.receiver.wait_for(lambda post: post.body["text"] == "persistent", timeout=15)
    assert [post.status for post in webhook.receiver.posts] == [429, 500, 200]
    assert len(webhook.receiver.delivered) == 1
    await eventually(lambda: [row.status for row in webhook.outbox()] == ["delivered"])
    [row] = webhook.outbox()
    assert row.attempts == 3


async def test_a_person_gets_the_reply_without_the_models_scaffolding(webhook: Webhook) -> None:
    raw = "<think>is it safe?</think>[Tool Call: read_file]\\nHere it is."
    answer = await webhook.post(message(f"reply: {raw}", "scaffold"))
    key = answer.json()["sessionKey"]
    post = await webhook.receiver.wait_for(lambda post: post.body["sessionKey"] == key)
    assert post.body["text"] == "Here it is."
    store = webhook.gateway.runtime.store
    entry = store.get(key)
    assert entry is not None
    *_, stored = store.events(entry.session_id)
    assert "<think>is it safe?</think>" in str(stored.data)  # the transcript keeps it all


async def test_a_receiver_that_refuses_for_good_fails_the_row_and_holds_up_no_one(
    webhook: Webhook,
) -> None:
    webhook.receiver.answer_next([410])
    await webhook.post(message("reply: to nobody", "gone"))
    await eventually(lambda: [row.status for row in webhook.outbox()] == ["failed"])
    [row] = webhook.outbox()
    assert row.last_error == "webhook answered 410 Gone"
    await webhook.post(message("reply: still works", "next", to="bob", **{"from": "bob"}))
    await webhook.receiver.wait_for(lambda post: post.body["text"] == "still works")


@pytest.mark.parametrize(("token", "status"), [(None, 401), ("wrong", 401), (TOKEN + "x", 401)])
async def test_inbound_posts_need_the_token(
    webhook: Webhook, token: str | None, status: int
) -> None:
    answer = await webhook.post(message("reply: nope"), token=token)
    assert answer.status_code == status
    assert answer.json() == {"ok": False, "error": "unauthorized: webhook token missing or wrong"}
    assert webhook.outbox() == []


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"to": "a", "from": "a", "messageId": "1"}, "inbound message: text must be a string"),
        (message("   "), "inbound message: text must not be empty"),
        (message("hi", chat="forum"), 'inbound message: chat must be "direct" or "group"'),
        ([1, 2], "inbound message: the body must be a JSON object"),
    ],
)
async def test_a_malformed_inbound_post_is_refused_and_writes_nothing(
    webhook: Webhook, body: Any, error: str
) -> None:
    answer = await webhook.http.post(
        f"{webhook.gateway.http_url}/channels/webhook",
        json=body,
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert (answer.status_code, answer.json()["error"]) == (400, error)
    listed = await webhook.gateway.runtime.call(webhook.gateway.runtime.catalog.page)
    assert listed.entries == []


async def test_an_agents_thread_spawn_in_a_webhook_conversation_gets_the_references_text(
    webhook: Webhook,
) -> None:
    await webhook.post(message("spawn thread scout: look around", "t0"))
    post = await webhook.receiver.wait_for(lambda post: post.body["to"] == "alice")
    assert post.body["text"] == (
        "results: sessions_spawn error: Thread bindings are unavailable for webhook."
    )
    listed = await webhook.gateway.runtime.call(webhook.gateway.runtime.catalog.page)
    assert [entry.key for entry in listed.entries] == ["agent:main:webhook:direct:alice"]


async def test_a_thread_spawn_from_a_webhook_conversation_is_refused(webhook: Webhook) -> None:
    """The webhook channel has no threads: both spawn kinds answer OpenClaw's text."""
    runtime = webhook.gateway.runtime
    await webhook.post(message("reply: hi", "t1"))
    requester = "agent:main:webhook:direct:alice"
    await eventually(lambda: len(webhook.receiver.delivered) == 1)
    planner = ThreadPlanner(
        catalog=runtime.catalog,
        store=runtime.store,
        workers=runtime.workers,
        channels=runtime.channels,
        config=runtime.agents_config.thread_bindings,
    )
    acp = await planner.prepare_acp_thread(
        requester_session_key=requester, child_session_key="agent:codex:acp:1", agent_id="codex"
    )
    subagent = await planner.prepare_subagent_thread(
        requester_session_key=requester,
        child_session_key="agent:main:subagent:00000000-0000-4000-8000-000000000001",
        agent_id="main",
    )
    for refused in (acp, subagent):
        assert isinstance(refused, ThreadRefusal), refused
        assert refused.error == "Thread bindings are unavailable for webhook."


async def test_channels_status_shows_the_running_channels(webhook: Webhook, tmp_path: Path) -> None:
    await webhook.post(message("reply: status please", "s1"))
    await webhook.receiver.wait_for(lambda post: post.body["text"] == "status please")
    await eventually(lambda: [row.status for row in webhook.outbox()] == ["delivered"])
    env = {**os.environ, "CLAWLINE_STATE_DIR": str(tmp_path / "cli")}
    done = await asyncio.to_thread(
        subprocess.run,
        [
            sys.executable,
            "-m",
            "clawline",
            "channels",
            "status",
            "--format",
            "json",
            "--url",
            webhook.gateway.url,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = {row["channel"]: row for row in json.loads(done.stdout)["channels"]}
    assert set(rows) == {"webchat", "webhook"}
    hook = rows["webhook"]
    assert (hook["connected"], hook["outbox"], hook["threads"]) == (None, 0, False)
    assert isinstance(hook["lastEventAt"], int)
    assert rows["webchat"]["lastEventAt"] is None
