"""The Telegram channel end to end: a real gateway whose adapter talks to the fake Bot API
(clawline.testing.fake_telegram) through python-telegram-bot — polling and webhook inbound,
replies through the outbox (once across 429 and 500, given up for a chat the bot was kicked
from), forum topics as threads, and the channel commands."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from clawline.channels.base import ConversationRef
from clawline.channels.telegram import TelegramChannel, topic_conversation
from clawline.channels.thread_bindings.planner import ThreadPlan, ThreadPlanner, bind_thread
from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.testing import eventually
from clawline.testing.fake_telegram import SECRET_HEADER, FakeTelegram
from clawline.testing.live_gateway import RunningGateway, running_gateway

SECRET = "hook-secret_1"


@pytest.fixture(autouse=True)
def _timedelta_periods(monkeypatch: pytest.MonkeyPatch) -> None:
    # python-telegram-bot 22 warns (an error here) on int time periods unless opted in.
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


@dataclass
class Telegram:
    tg: FakeTelegram
    gateway: RunningGateway

    @property
    def adapter(self) -> TelegramChannel:
        adapter = self.gateway.runtime.channels.get("telegram")
        assert isinstance(adapter, TelegramChannel)
        return adapter

    def outbox(self) -> list[Any]:
        return self.gateway.runtime.store.outbox.page(None, None, 100)

    async def label(self, key: str, label: str) -> None:
        runtime = self.gateway.runtime
        await runtime.call(runtime.catalog.patch, key, {"label": label})


def _settings(tmp_path: Path, tg: FakeTelegram, **telegram: Any) -> Settings:
    table = {
        "botToken": tg.token,
        "apiBaseUrl": tg.base_url,
        "pollTimeoutSeconds": 1,
        **telegram,
    }
    return Settings(state_dir=tmp_path / "state", raw={"channels": {"telegram": table}})


@contextlib.asynccontextmanager
async def _running(tmp_path: Path, **telegram: Any) -> AsyncIterator[Telegram]:
    async with FakeTelegram() as tg:
        settings = _settings(tmp_path, tg, **telegram)
        async with running_gateway(
            tmp_path / "state", settings=settings, gateway_settings=GatewaySettings(port=0)
        ) as gateway:
            yield Telegram(tg, gateway)


@pytest.fixture
async def telegram(tmp_path: Path) -> AsyncIterator[Telegram]:
    async with _running(tmp_path) as running:
        yield running


def texts(messages: list[dict[str, Any]]) -> list[str]:
    return [message["text"] for message in messages]


async def test_a_private_message_is_answered_in_that_chat(
    telegram: Telegram, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    tg = telegram.tg
    ada = tg.user("Ada")
    chat = tg.private_chat(ada)
    await tg.user_says(chat, ada, "reply: hello")
    reply = await tg.wait_for_sent(lambda message: message["chat"]["id"] == chat.id)
    assert reply["text"] == "hello"
    key = f"agent:main:telegram:direct:{ada.id}"
    runtime = telegram.gateway.runtime
    entry = await runtime.call(runtime.catalog.get, key)
    assert entry is not None
    assert (entry.extra["lastChannel"], entry.extra["lastTo"]) == ("telegram", str(chat.id))
    await eventually(lambda: [row.status for row in telegram.outbox()] == ["delivered"])
    [row] = telegram.outbox()
    assert row.remote_id == str(reply["message_id"])
    assert texts(tg.sent_messages()) == ["hello"]
    assert "/bot<bot-token>/getUpdates" in caplog.text  # httpx logs every request's URL
    assert tg.token not in caplog.text


async def test_a_forum_topic_bound_to_a_child_session_talks_to_it(telegram: Telegram) -> None:
    tg = telegram.tg
    runtime = telegram.gateway.runtime
    forum = tg.forum("Team")
    ada = tg.user("Ada")
    child = "agent:main:subagent:topic-child"
    await telegram.label(child, "topic child")
    topic = await telegram.adapter.create_child_conversation(
        "default", ConversationRef(str(forum.id)), session_key=child, label="topic child"
    )
    [created] = tg.calls_to("createForumTopic")
    assert created.params["name"] == "topic child"
    assert topic.parent_conversation_id == str(forum.id)
    thread_id = int(topic.conversation_id.rpartition(":")[2])
    assert topic.conversation_id == topic_conversation(forum.id, thread_id)
    plan = ThreadPlan(
        channel="telegram",
        account_id="default",
        conversation_id=topic.conversation_id,
        placement="child",
        idle_ms=0,
        max_age_ms=0,
        kind="subagent",
        parent_conversation_id=str(forum.id),
    )
    await runtime.call(bind_thread, runtime.store, plan, child, runtime.clock.now_ms())
    await tg.user_says(forum, ada, "reply: from the child", thread_id=thread_id)
    reply = await tg.wait_for_sent(lambda message: message.get("text") == "from the child")
    assert reply["message_thread_id"] == thread_id
    assert reply["chat"]["id"] == forum.id
    entry = await runtime.call(runtime.catalog.get, child)
    assert entry is not None
    assert entry.extra["lastThreadId"] == topic.conversation_id
    # The forum's main chat is a conversation of its own.
    await tg.user_says(forum, ada, "reply: main chat")
    main = await tg.wait_for_sent(lambda message: message.get("text") == "main chat")
    assert "message_thread_id" not in main
    group_key = f"agent:main:telegram:group:{forum.id}"
    assert await runtime.call(runtime.catalog.get, group_key) is not None


async def test_429_then_500_then_success_is_delivered_once(telegram: Telegram) -> None:
    tg = telegram.tg
    ada = tg.user("Ada")
    chat = tg.private_chat(ada)
    tg.fail_next("sendMessage", [429, 500])
    await tg.user_says(chat, ada, "reply: persistent")
    await tg.wait_for_sent(lambda message: message["text"] == "persistent", timeout=20)
    await eventually(lambda: [row.status for row in telegram.outbox()] == ["delivered"], timeout=20)
    [row] = telegram.outbox()
    assert row.attempts == 3
    assert [call.status for call in tg.calls_to("sendMessage")] == [429, 500, 200]
    assert texts(tg.sent_messages(chat)) == ["persistent"]


async def test_a_chat_the_bot_was_kicked_from_fails_its_row_and_holds_up_no_one(
    telegram: Telegram,
) -> None:
    tg = telegram.tg
    ada, bob = tg.user("Ada"), tg.user("Bob")
    group = tg.group("Gone")
    tg.fail_next("sendMessage", [403])
    await tg.user_says(group, ada, "reply: to nobody")
    await eventually(lambda: [row.status for row in telegram.outbox()] == ["failed"])
    [row] = telegram.outbox()
    assert row.last_error == "telegram: Forbidden: bot was kicked from the group chat"
    other = tg.private_chat(bob)
    await tg.user_says(other, bob, "reply: still works")
    await tg.wait_for_sent(lambda message: message["text"] == "still works")
    assert tg.sent_messages(group) == []


async def test_focus_and_unfocus_bind_the_chat_to_a_labelled_session(telegram: Telegram) -> None:
    tg = telegram.tg
    runtime = telegram.gateway.runtime
    ada = tg.user("Ada")
    chat = tg.private_chat(ada)
    helper = "agent:main:helper"
    await telegram.label(helper, "helper")

    async def say(text: str) -> str:
        before = len(tg.sent_messages(chat))
        await tg.user_says(chat, ada, text)
        await eventually(lambda: len(tg.sent_messages(chat)) > before)
        return str(tg.sent_messages(chat)[before]["text"])

    assert await say("/focus nobody") == "No session is labelled 'nobody'."
    assert await say("/focus helper") == (
        "Focused on helper (agent:main:helper): messages here go to that session now."
    )
    binding = await runtime.call(runtime.store.bindings.active, "telegram", "default", str(chat.id))
    assert binding is not None
    assert binding.session_key == helper
    assert await say("reply: via focus") == "via focus"
    entry = await runtime.call(runtime.catalog.get, helper)
    assert entry is not None
    assert entry.extra["lastChannel"] == "telegram"
    assert await say("/subagents") == "agent:main:helper has no sub-agents."
    assert await say(f"/unfocus@{tg.bot.username}") == (
        "Unfocused: agent:main:helper no longer answers here."
    )
    assert await say("/unfocus") == "This conversation is not focused on a session."
    assert await say("reply: own session again") == "own session again"
    own = await runtime.call(runtime.catalog.get, f"agent:main:telegram:direct:{ada.id}")
    assert own is not None


async def test_webhook_mode_takes_updates_with_the_secret_only(tmp_path: Path) -> None:
    async with (
        _running(
            tmp_path,
            mode="webhook",
            webhookUrl="https://example.invalid/channels/telegram",
            webhookSecret=SECRET,
        ) as telegram,
        httpx.AsyncClient() as http,
    ):
        tg = telegram.tg
        call = await tg.wait_for_call("setWebhook")
        assert call.params["secret_token"] == SECRET
        assert tg.calls_to("getUpdates") == []
        endpoint = f"{telegram.gateway.http_url}/channels/telegram"
        ada = tg.user("Ada")
        chat = tg.private_chat(ada)
        wrong = await http.post(endpoint, json={"update_id": 1}, headers={SECRET_HEADER: "nope"})
        assert wrong.status_code == 401
        missing = await http.post(endpoint, json={"update_id": 1})
        assert missing.status_code == 401
        # Point the fake's webhook at the gateway (its real port is known only now).
        async with httpx.AsyncClient() as raw:
            answer = await raw.post(
                f"{tg.base_url}{tg.token}/setWebhook",
                json={"url": endpoint, "secret_token": SECRET},
            )
        assert answer.status_code == 200
        await tg.user_says(chat, ada, "reply: via webhook")
        reply = await tg.wait_for_sent(lambda message: message["chat"]["id"] == chat.id)
        assert reply["text"] == "via webhook"
        await eventually(lambda: tg.pending_updates == [])
        assert texts(tg.sent_messages()) == ["via webhook"]


async def test_a_thread_spawn_in_a_forum_opens_a_topic_for_the_child(tmp_path: Path) -> None:
    spawns = {"threadBindings": {"spawnSubagentSessions": True}}
    async with _running(tmp_path, **spawns) as telegram:
        tg = telegram.tg
        runtime = telegram.gateway.runtime
        forum = tg.forum("Team")
        ada = tg.user("Ada")
        await tg.user_says(forum, ada, "reply: hi")
        await tg.wait_for_sent(lambda message: message.get("text") == "hi")
        planner = ThreadPlanner(
            catalog=runtime.catalog,
            store=runtime.store,
            workers=runtime.workers,
            channels=runtime.channels,
            config=runtime.agents_config.thread_bindings,
        )
        plan = await planner.prepare_subagent_thread(
            requester_session_key=f"agent:main:telegram:group:{forum.id}",
            child_session_key="agent:main:subagent:00000000-0000-4000-8000-000000000001",
            agent_id="main",
            label="research",
        )
        assert isinstance(plan, ThreadPlan), plan
        assert plan.placement == "child"
        [created] = tg.calls_to("createForumTopic")
        assert created.params["name"] == "research"
        assert plan.conversation_id.startswith(f"{forum.id}:topic:")
        assert plan.parent_conversation_id == str(forum.id)


async def test_subagents_lists_the_children_of_the_chats_session(telegram: Telegram) -> None:
    tg = telegram.tg
    ada = tg.user("Ada")
    chat = tg.private_chat(ada)
    await tg.user_says(chat, ada, "spawn scout: reply: found it")
    await tg.wait_for_sent(lambda message: str(message["text"]).startswith("ack: "))
    before = len(tg.sent_messages(chat))
    await tg.user_says(chat, ada, "/subagents")
    await eventually(lambda: len(tg.sent_messages(chat)) > before)
    listed = str(tg.sent_messages(chat)[before]["text"])
    head, line = listed.split("\n")
    assert head == f"Sub-agents of agent:main:telegram:direct:{ada.id}:"
    assert re.fullmatch(r"- scout \(agent:main:subagent:[0-9a-f-]{36}\): done", line), line
