"""The fake Telegram Bot API (clawline.testing.fake_telegram) driven by the real
python-telegram-bot, pointed at it through its base URL: what a Telegram channel adapter sees.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import socket
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from telegram import Bot, Update
from telegram.error import BadRequest, Conflict, Forbidden, InvalidToken, NetworkError, RetryAfter
from telegram.ext import Application, CommandHandler, ContextTypes, MessageHandler, filters
from telegram.request import HTTPXRequest

from clawline.testing import eventually
from clawline.testing.fake_telegram import SECRET_HEADER, FakeTelegram, TelegramFailure

POLL_TIMEOUT_S = 5  # getUpdates' long poll; the fake answers at once when an update is queued


@pytest.fixture(autouse=True)
def _timedelta_periods(monkeypatch: pytest.MonkeyPatch) -> None:
    # python-telegram-bot 22 warns (an error here) on every int time period it builds, RetryAfter's
    # included, unless opted in to datetime.timedelta.
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


def bot_for(tg: FakeTelegram, token: str | None = None) -> Bot:
    return Bot(token or tg.token, base_url=tg.base_url, base_file_url=tg.base_file_url)


def application_for(tg: FakeTelegram) -> Application[Any, Any, Any, Any, Any, Any]:
    return (
        Application.builder()
        .token(tg.token)
        .base_url(tg.base_url)
        .base_file_url(tg.base_file_url)
        .build()
    )


@contextlib.asynccontextmanager
async def polling(
    app: Application[Any, Any, Any, Any, Any, Any],
) -> AsyncIterator[Application[Any, Any, Any, Any, Any, Any]]:
    await app.initialize()
    await app.start()
    assert app.updater is not None
    await app.updater.start_polling(timeout=POLL_TIMEOUT_S, poll_interval=0)
    try:
        yield app
    finally:
        await app.updater.stop()
        await app.stop()
        await app.shutdown()


async def reply_echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.message is not None
    await update.message.reply_text(f"echo: {update.message.text}")


async def raw(tg: FakeTelegram, method: str, **params: Any) -> tuple[int, dict[str, Any]]:
    async with httpx.AsyncClient() as client:
        answer = await client.post(f"{tg.base_url}{tg.token}/{method}", json=params)
    return answer.status_code, answer.json()


async def test_get_me_answers_the_bot(tg: FakeTelegram) -> None:
    async with bot_for(tg) as bot:  # initialize() calls getMe too
        me = await bot.get_me()
    assert (me.id, me.username, me.is_bot) == (tg.bot.id, "clawline_test_bot", True)
    assert [call.method for call in tg.calls] == ["getMe", "getMe"]


async def test_another_token_is_unauthorized_and_an_unknown_method_not_found(
    tg: FakeTelegram,
) -> None:
    async with HTTPXRequest() as request:  # not `async with bot`: its initialize() would fail
        other = Bot("42:another-bot", base_url=tg.base_url, request=request)
        with pytest.raises(InvalidToken, match="Unauthorized"):
            await other.get_me()
    async with httpx.AsyncClient() as client:
        wrong = await client.post(f"{tg.base_url}42:another-bot/getMe")
        unknown = await client.post(f"{tg.base_url}{tg.token}/sendDice", data={"chat_id": "1"})
    assert (wrong.status_code, wrong.json()) == (
        401,
        {"ok": False, "error_code": 401, "description": "Unauthorized"},
    )
    assert (unknown.status_code, unknown.json()) == (
        404,
        {"ok": False, "error_code": 404, "description": "Not Found"},
    )


async def test_a_private_message_arrives_by_polling_and_the_reply_is_recorded(
    tg: FakeTelegram,
) -> None:
    ada = tg.user("Ada", username="ada")
    chat = tg.private_chat(ada)
    app = application_for(tg)
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, reply_echo))
    async with polling(app):
        update = await tg.user_says(chat, ada, "hello")
        reply = await tg.wait_for_sent(lambda message: message["chat"]["id"] == chat.id)
    assert reply["text"] == "echo: hello"
    assert reply["from"]["id"] == tg.bot.id
    assert "reply_to_message" not in reply  # PTB quotes by default only outside private chats
    assert tg.sent_messages(chat) == [reply]
    assert tg.pending_updates == []  # the updater's last getUpdates confirmed it
    methods = [call.method for call in tg.calls]
    assert methods[:3] == ["getMe", "deleteWebhook", "getUpdates"]
    assert set(methods) == {"getMe", "deleteWebhook", "getUpdates", "sendMessage"}
    confirming = [c for c in tg.calls_to("getUpdates") if c.params.get("timeout") == "0"]
    assert confirming[-1].params["offset"] == str(update["update_id"] + 1)


async def test_a_command_carries_a_bot_command_entity(tg: FakeTelegram) -> None:
    ada = tg.user("Ada")
    chat = tg.private_chat(ada)
    seen: list[list[str]] = []

    async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None
        seen.append(list(context.args or []))
        await update.message.reply_text("started")

    app = application_for(tg)
    app.add_handler(CommandHandler("start", start))
    async with polling(app):
        update = await tg.user_says(chat, ada, "/start now")
        await tg.wait_for_sent()
    assert update["message"]["entities"] == [{"type": "bot_command", "offset": 0, "length": 6}]
    assert seen == [["now"]]
    assert [m["text"] for m in tg.sent_messages(chat)] == ["started"]


async def test_a_forum_topic_is_created_and_a_reply_stays_in_its_thread(tg: FakeTelegram) -> None:
    forum = tg.forum("Team")
    ada = tg.user("Ada")
    app = application_for(tg)
    app.add_handler(MessageHandler(filters.TEXT, reply_echo))
    async with polling(app):
        topic = await app.bot.create_forum_topic(forum.id, "task 7")
        sent = await app.bot.send_message(
            forum.id, "bound", message_thread_id=topic.message_thread_id
        )
        await tg.user_says(forum, ada, "go on", thread_id=topic.message_thread_id)
        await tg.wait_for_sent(lambda message: message.get("text") == "echo: go on")
    assert topic.name == "task 7"
    assert (sent.message_thread_id, sent.is_topic_message) == (topic.message_thread_id, True)
    in_topic = tg.sent_messages(forum, thread_id=topic.message_thread_id)
    assert [m["text"] for m in in_topic] == ["bound", "echo: go on"]
    assert in_topic[1]["reply_to_message"]["text"] == "go on"  # PTB quotes in groups
    other = tg.create_topic(forum, "another", by=ada)
    assert tg.sent_messages(forum, thread_id=other) == []


async def test_topics_and_threads_only_where_telegram_has_them(tg: FakeTelegram) -> None:
    group = tg.group("Plain")
    forum = tg.forum("Team")
    async with bot_for(tg) as bot:
        with pytest.raises(BadRequest, match="The chat is not a forum"):
            await bot.create_forum_topic(group.id, "nope")
        with pytest.raises(BadRequest, match="Message thread not found"):
            await bot.send_message(forum.id, "lost", message_thread_id=999)
        with pytest.raises(BadRequest, match="Chat not found"):
            await bot.send_message(-4242, "nobody")
    assert tg.sent_messages() == []
    assert [call.status for call in tg.calls if call.method != "getMe"] == [400, 400, 400]


async def test_429_then_500_then_success_sends_exactly_one_message(tg: FakeTelegram) -> None:
    ada = tg.user("Ada")
    chat = tg.private_chat(ada)
    tg.fail_next("sendMessage", [429, 500])
    async with bot_for(tg) as bot:
        with pytest.raises(RetryAfter) as flood:
            await bot.send_message(chat.id, "once")
        assert flood.value.retry_after == dt.timedelta(seconds=1)
        with pytest.raises(NetworkError, match="Internal Server Error") as broken:
            await bot.send_message(chat.id, "once")
        assert type(broken.value) is NetworkError
        sent = await bot.send_message(chat.id, "once")
    assert [m["text"] for m in tg.sent_messages(chat)] == ["once"]
    assert sent.message_id == tg.sent_messages(chat)[0]["message_id"]
    assert [call.status for call in tg.calls_to("sendMessage")] == [429, 500, 200]


async def test_scripted_failures_answer_as_telegram_does(tg: FakeTelegram) -> None:
    chat = tg.private_chat(tg.user())
    tg.fail_next("sendmessage", [TelegramFailure.of(429, retry_after=3), 500, 400, 403])
    answers = [await raw(tg, "sendMessage", chat_id=chat.id, text="x") for _ in range(5)]
    assert answers[:4] == [
        (
            429,
            {
                "ok": False,
                "error_code": 429,
                "description": "Too Many Requests: retry after 3",
                "parameters": {"retry_after": 3},
            },
        ),
        (500, {"ok": False, "error_code": 500, "description": "Internal Server Error"}),
        (400, {"ok": False, "error_code": 400, "description": "Bad Request: chat not found"}),
        (
            403,
            {
                "ok": False,
                "error_code": 403,
                "description": "Forbidden: bot was kicked from the group chat",
            },
        ),
    ]
    assert answers[4][0] == 200
    assert answers[4][1]["ok"] is True
    assert len(tg.sent_messages()) == 1
    tg.fail_next("sendMessage", [403])
    async with bot_for(tg) as bot:
        with pytest.raises(Forbidden, match="Forbidden: bot was kicked from the group chat"):
            await bot.send_message(chat.id, "y")


async def test_polling_rides_out_a_failing_get_updates_and_delivers_once(tg: FakeTelegram) -> None:
    ada = tg.user("Ada")
    chat = tg.private_chat(ada)
    app = application_for(tg)
    app.add_handler(MessageHandler(filters.TEXT, reply_echo))
    tg.fail_next("getUpdates", [502])  # PTB's updater waits 1 s, then 1.5 s, ... and polls again
    async with polling(app):
        await tg.user_says(chat, ada, "still there?")
        await tg.wait_for_sent()
        await tg.user_says(chat, ada, "and now?")
        await tg.wait_for_sent(lambda message: message["text"] == "echo: and now?")
    statuses = [call.status for call in tg.calls_to("getUpdates")]
    assert statuses[:2] == [502, 200]
    assert [m["text"] for m in tg.sent_messages(chat)] == ["echo: still there?", "echo: and now?"]


async def test_get_updates_confirms_what_lies_below_the_offset(tg: FakeTelegram) -> None:
    ada = tg.user("Ada")
    chat = tg.private_chat(ada)
    first = await tg.user_says(chat, ada, "one")
    second = await tg.user_says(chat, ada, "two")
    async with bot_for(tg) as bot:
        both = await bot.get_updates(timeout=0)
        again = await bot.get_updates(offset=second["update_id"], timeout=0, limit=5)
        waiting = asyncio.create_task(bot.get_updates(offset=second["update_id"] + 1, timeout=10))
        await tg.wait_for_call("getUpdates", lambda call: call.params.get("limit") == "5")
        third = await tg.user_says(chat, ada, "three")
        woken = await waiting  # a long poll answers as soon as an update is queued
    assert [u.update_id for u in both] == [first["update_id"], second["update_id"]]
    assert [u.update_id for u in again] == [second["update_id"]]
    assert [u.update_id for u in woken] == [third["update_id"]]
    assert woken[0].message is not None
    assert woken[0].message.text == "three"
    assert [u["update_id"] for u in tg.pending_updates] == [third["update_id"]]


async def test_edit_message_text_changes_the_recorded_message(tg: FakeTelegram) -> None:
    chat = tg.private_chat(tg.user())
    async with bot_for(tg) as bot:
        sent = await bot.send_message(chat.id, "draft", parse_mode="HTML")
        edited = await bot.edit_message_text("final", chat_id=chat.id, message_id=sent.message_id)
        with pytest.raises(BadRequest, match="Message is not modified"):
            await bot.edit_message_text("final", chat_id=chat.id, message_id=sent.message_id)
        with pytest.raises(BadRequest, match="Message to edit not found"):
            await bot.edit_message_text("x", chat_id=chat.id, message_id=999)
        await bot.send_chat_action(chat.id, "typing")
        await bot.set_my_commands([("start", "Start a session")])
        commands = await bot.get_my_commands()
    assert not isinstance(edited, bool)
    assert edited.text == "final"
    assert edited.edit_date is not None
    assert [m["text"] for m in tg.sent_messages(chat)] == ["final"]
    assert tg.calls_to("sendMessage")[0].params["parse_mode"] == "HTML"
    assert tg.chat_actions == [(chat.id, "typing", None)]
    assert [(c.command, c.description) for c in commands] == [("start", "Start a session")]


class WebhookReceiver:
    """A local HTTP server taking webhook POSTs; it answers 500 to the first ``fail_first``."""

    def __init__(self, fail_first: int = 0) -> None:
        self.fail_first = fail_first
        self.posts: list[tuple[dict[str, Any], str | None]] = []
        self.accepted: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.url = ""

    async def _receive(self, http: Request) -> Response:
        body = await http.json()
        self.posts.append((body, http.headers.get(SECRET_HEADER)))
        if len(self.posts) <= self.fail_first:
            return Response(status_code=500)
        await self.accepted.put(body)
        return Response()

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[WebhookReceiver]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        app = Starlette(routes=[Route("/telegram", self._receive, methods=["POST"])])
        config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)
        server = uvicorn.Server(config)
        server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
        task = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            await eventually(lambda: server.started or task.done(), what="the receiver")
            self.url = f"http://127.0.0.1:{sock.getsockname()[1]}/telegram"
            yield self
        finally:
            server.should_exit = True
            await task


async def test_webhook_mode_posts_updates_with_the_secret_and_retries(tg: FakeTelegram) -> None:
    ada = tg.user("Ada")
    chat = tg.private_chat(ada)
    app = application_for(tg)
    app.add_handler(MessageHandler(filters.TEXT, reply_echo))
    async with WebhookReceiver(fail_first=1).serving() as receiver:
        await app.initialize()
        await app.start()
        try:
            assert await app.bot.set_webhook(receiver.url, secret_token="s3cret")
            with pytest.raises(Conflict, match="can't use getUpdates method while webhook"):
                await app.bot.get_updates(timeout=0)
            update = await tg.user_says(chat, ada, "via webhook")
            body = await asyncio.wait_for(receiver.accepted.get(), 10)
            # The receiver hands the update to the application, as an adapter's endpoint would.
            await app.update_queue.put(Update.de_json(body, app.bot))
            await tg.wait_for_sent()
            info = await app.bot.get_webhook_info()
            assert await app.bot.delete_webhook()
        finally:
            await app.stop()
            await app.shutdown()
    assert body == update
    assert receiver.posts == [(update, "s3cret"), (update, "s3cret")]
    assert (info.url, info.pending_update_count) == (receiver.url, 0)
    assert info.last_error_message == "Wrong response from the webhook: 500 Internal Server Error"
    assert [m["text"] for m in tg.sent_messages(chat)] == ["echo: via webhook"]
    assert tg.pending_updates == []
    assert [c.method for c in tg.calls] == [
        "getMe",
        "setWebhook",
        "getUpdates",
        "sendMessage",
        "getWebhookInfo",
        "deleteWebhook",
    ]
