"""A local fake of the Telegram Bot API: ``GET``/``POST /bot<token>/<method>`` on 127.0.0.1, the
subset a channel adapter uses, answering in Telegram's wire format (``{"ok": true, "result": …}``
or ``{"ok": false, "error_code": …, "description": …}`` with Telegram's own texts).

Point a bot library at it through its base URL (python-telegram-bot:
``Bot(tg.token, base_url=tg.base_url, base_file_url=tg.base_file_url)``) and play the users from
the test::

    async with FakeTelegram() as tg:
        ada = tg.user("Ada")
        await tg.user_says(tg.private_chat(ada), ada, "/start")
        ... the bot polls getUpdates and answers ...
        reply = await tg.wait_for_sent(lambda message: message["chat"]["id"] == ada.id)

Methods: ``getMe``, ``getUpdates`` (long polling: ``offset``, ``limit``, ``timeout``),
``sendMessage``, ``editMessageText``, ``createForumTopic`` (forum supergroups only),
``sendChatAction``, ``setMyCommands`` / ``getMyCommands`` / ``deleteMyCommands``, ``setWebhook``
/ ``deleteWebhook`` / ``getWebhookInfo``, ``close`` and ``logOut``; any other answers 404
``Not Found``, another bot's token 401 ``Unauthorized``. Method names are case-insensitive, as
on Telegram. Bodies may be form-encoded (python-telegram-bot's way: strings as they are, other
values JSON-encoded), JSON, or the query string.

With a webhook set, each update is POSTed as JSON to its URL (``X-Telegram-Bot-Api-Secret-Token``
carries the secret token when one was given), one at a time and in order, again until the
receiver answers 2xx; getUpdates then answers 409 as Telegram does. Unlike Telegram the fake
accepts a plain ``http://`` URL on any port: the receiver is a local test server.

Scripted failures (:meth:`FakeTelegram.fail_next`) answer the next calls of a method with an
error before it succeeds again; a failed call changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from clawline.errors import InvalidInput
from clawline.testing.loopback_server import LoopbackServer

__all__ = [
    "DEFAULT_TOKEN",
    "SECRET_HEADER",
    "FakeChat",
    "FakeTelegram",
    "FakeUser",
    "TelegramCall",
    "TelegramFailure",
]

DEFAULT_TOKEN = "123456789:AAHfakeTelegramTokenForClawlineTests0"
"""the token a :class:`FakeTelegram` answers to unless given another."""

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
"""the header of a webhook POST carrying the webhook's secret token."""
GENERAL_TOPIC_ICON_COLOR = 0x6FB9F0
WEBHOOK_RETRY_S = 0.05
MAX_LIMIT = 100

ChatType = Literal["private", "group", "supergroup", "channel"]
Message = dict[str, Any]

_DESCRIPTIONS: dict[int, str] = {
    400: "Bad Request: chat not found",
    401: "Unauthorized",
    403: "Forbidden: bot was kicked from the group chat",
    404: "Not Found",
    409: "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running",
    500: "Internal Server Error",
    502: "Bad Gateway",
}
_WEBHOOK_CONFLICT = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)
_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are "
    "exactly the same as a current content and reply markup of the message"
)


@dataclass(frozen=True, slots=True)
class TelegramFailure:
    """One scripted error answer: ``error_code``, Telegram's ``description``, and for 429 the
    seconds in ``parameters.retry_after``."""

    error_code: int
    description: str
    retry_after: int | None = None

    @classmethod
    def of(cls, code: int, *, retry_after: int = 1) -> TelegramFailure:
        """The answer Telegram gives with ``code``: 429 ``Too Many Requests: retry after N``,
        500 ``Internal Server Error``, 400 ``Bad Request: chat not found``, 403 ``Forbidden: bot
        was kicked from the group chat``, 401 ``Unauthorized``, 404, 409, 502."""
        if code == 429:
            return cls(429, f"Too Many Requests: retry after {retry_after}", retry_after)
        if code not in _DESCRIPTIONS:
            raise ValueError(f"no Telegram description known for error code {code}")
        return cls(code, _DESCRIPTIONS[code])

    def to_json(self) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "ok": False,
            "error_code": self.error_code,
            "description": self.description,
        }
        if self.retry_after is not None:
            answer["parameters"] = {"retry_after": self.retry_after}
        return answer


class _ApiError(InvalidInput):
    def __init__(self, failure: TelegramFailure) -> None:
        super().__init__(failure.description)
        self.failure = failure


def _bad_request(description: str) -> _ApiError:
    return _ApiError(TelegramFailure(400, f"Bad Request: {description}"))


@dataclass(frozen=True, slots=True)
class FakeUser:
    """A Telegram user (or the bot itself)."""

    id: int
    first_name: str
    username: str | None = None
    is_bot: bool = False

    def to_json(self) -> dict[str, Any]:
        user: dict[str, Any] = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        if self.username is not None:
            user["username"] = self.username
        return user


@dataclass(frozen=True, slots=True)
class FakeChat:
    """A chat: private (its id is the user's), a group, or a supergroup (a forum when
    ``is_forum``)."""

    id: int
    type: ChatType
    title: str | None = None
    first_name: str | None = None
    username: str | None = None
    is_forum: bool = False

    def to_json(self) -> dict[str, Any]:
        chat: dict[str, Any] = {"id": self.id, "type": self.type}
        for name in ("title", "first_name", "username"):
            if (value := getattr(self, name)) is not None:
                chat[name] = value
        if self.is_forum:
            chat["is_forum"] = True
        return chat


@dataclass(frozen=True, slots=True)
class TelegramCall:
    """One request the fake answered: the method (Telegram's spelling), the parameters as sent
    (form values are strings), and the HTTP status of the answer."""

    method: str
    params: dict[str, Any]
    status: int


@dataclass(slots=True)
class _Webhook:
    url: str
    secret_token: str | None
    max_connections: int
    allowed_updates: list[str] | None
    last_error_date: int | None = None
    last_error_message: str | None = None


@dataclass(slots=True)
class _Params:
    values: dict[str, Any] = field(default_factory=dict)

    def text(self, name: str) -> str | None:
        value = self.values.get(name)
        return None if value is None else str(value)

    def integer(self, name: str) -> int | None:
        value = self.values.get(name)
        if value is None or value == "":
            return None
        try:
            return int(value)
        except (TypeError, ValueError):
            raise _bad_request(f"invalid {name} specified") from None

    def number(self, name: str) -> float | None:
        value = self.values.get(name)
        if value is None or value == "":
            return None
        try:
            return float(value)
        except (TypeError, ValueError):
            raise _bad_request(f"invalid {name} specified") from None

    def flag(self, name: str) -> bool:
        value = self.values.get(name)
        if isinstance(value, str):
            return value.lower() in {"true", "1"}
        return bool(value)

    def obj(self, name: str) -> Any:
        value = self.values.get(name)
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                raise _bad_request(f"can't parse {name} JSON object") from None
        return value


Handler = Callable[[_Params], Awaitable[Any]]


class FakeTelegram:
    """The fake Bot API server (an HTTP server on 127.0.0.1 port 0) and the test's side of it:
    users and chats, users' messages queued as updates, the calls and sent messages recorded,
    scripted failures."""

    def __init__(
        self,
        token: str = DEFAULT_TOKEN,
        *,
        bot_username: str = "clawline_test_bot",
        webhook_retry_s: float = WEBHOOK_RETRY_S,
    ) -> None:
        bot_id, _, _ = token.partition(":")
        self.token = token
        self.bot = FakeUser(int(bot_id), "Clawline Test Bot", bot_username, is_bot=True)
        self.webhook_retry_s = webhook_retry_s
        self.calls: list[TelegramCall] = []
        self.commands: list[dict[str, Any]] = []
        self.chat_actions: list[tuple[int, str, int | None]] = []
        self.url = ""
        self._users = itertools.count(1001)
        self._groups = itertools.count(1)
        self._update_ids = itertools.count(1)
        self._message_ids: dict[int, itertools.count[int]] = {}
        self._chats: dict[int, FakeChat] = {}
        self._messages: dict[tuple[int, int], Message] = {}
        self._sent: list[Message] = []
        self._topics: dict[int, dict[int, dict[str, Any]]] = {}
        self._updates: deque[dict[str, Any]] = deque()
        self._failures: dict[str, deque[TelegramFailure]] = {}
        self._webhook: _Webhook | None = None
        self._webhook_task: asyncio.Task[None] | None = None
        self._poll_generation = 0
        self._closing = False
        self._changed = asyncio.Condition()
        self._server = LoopbackServer("fake Telegram server")
        self._methods: dict[str, tuple[str, Handler]] = {
            name.lower(): (name, handler)
            for name, handler in {
                "getMe": self._get_me,
                "getUpdates": self._get_updates,
                "sendMessage": self._send_message,
                "editMessageText": self._edit_message_text,
                "createForumTopic": self._create_forum_topic,
                "sendChatAction": self._send_chat_action,
                "setMyCommands": self._set_my_commands,
                "getMyCommands": self._get_my_commands,
                "deleteMyCommands": self._delete_my_commands,
                "setWebhook": self._set_webhook,
                "deleteWebhook": self._delete_webhook,
                "getWebhookInfo": self._get_webhook_info,
                "close": self._true,
                "logOut": self._true,
            }.items()
        }

    @property
    def base_url(self) -> str:
        """The bot library's base URL: requests go to ``<base_url><token>/<method>``."""
        return f"{self.url}/bot"

    @property
    def base_file_url(self) -> str:
        return f"{self.url}/file/bot"

    # -- the test's side ------------------------------------------------------------------------

    def user(self, first_name: str = "Ada", *, username: str | None = None) -> FakeUser:
        """A new user (ids count up from 1001)."""
        return FakeUser(next(self._users), first_name, username)

    def private_chat(self, user: FakeUser) -> FakeChat:
        """The private chat between ``user`` and the bot (its id is the user's)."""
        chat = FakeChat(user.id, "private", first_name=user.first_name, username=user.username)
        return self._add_chat(chat)

    def group(self, title: str = "Test group") -> FakeChat:
        """A basic group (a negative id)."""
        return self._add_chat(FakeChat(-next(self._groups), "group", title=title))

    def supergroup(self, title: str = "Test supergroup", *, is_forum: bool = False) -> FakeChat:
        """A supergroup (an id below -100 000 000 000 0), with topics when ``is_forum``."""
        chat_id = -1_000_000_000_000 - next(self._groups)
        return self._add_chat(FakeChat(chat_id, "supergroup", title=title, is_forum=is_forum))

    def forum(self, title: str = "Test forum") -> FakeChat:
        """A supergroup with topics enabled (``is_forum``)."""
        return self.supergroup(title, is_forum=True)

    def create_topic(self, chat: FakeChat, name: str, *, by: FakeUser | None = None) -> int:
        """A topic opened in forum ``chat`` by a user (or the bot); its ``message_thread_id``."""
        if not chat.is_forum:
            raise ValueError(f"chat {chat.id} is not a forum")
        topic = self._open_topic(chat, name, GENERAL_TOPIC_ICON_COLOR, by or self.bot)
        return int(topic["message_thread_id"])

    async def user_says(
        self, chat: FakeChat, user: FakeUser, text: str, *, thread_id: int | None = None
    ) -> dict[str, Any]:
        """Queue the update of ``user`` writing ``text`` in ``chat`` (in topic ``thread_id`` of a
        forum); a text starting with ``/`` carries a ``bot_command`` entity. The update."""
        if thread_id is not None and thread_id not in self._topics.get(chat.id, {}):
            raise ValueError(f"chat {chat.id} has no topic {thread_id}")
        message = self._message(chat, user, text, thread_id)
        if text.startswith("/"):
            command = text.split(maxsplit=1)[0]
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
        return await self.queue_update({"message": message})

    async def queue_update(self, update: dict[str, Any]) -> dict[str, Any]:
        """Queue any update (an ``update_id`` is added); the update."""
        update = {"update_id": next(self._update_ids), **update}
        async with self._changed:
            self._updates.append(update)
            self._changed.notify_all()
        return update

    @property
    def pending_updates(self) -> list[dict[str, Any]]:
        """The updates not yet confirmed (getUpdates) or delivered (webhook)."""
        return list(self._updates)

    def sent_messages(
        self, chat: FakeChat | int | None = None, thread_id: int | None = None
    ) -> list[Message]:
        """The messages the bot sent (as edited since), in order; of one chat, one topic."""
        chat_id = chat.id if isinstance(chat, FakeChat) else chat
        return [
            message
            for message in self._sent
            if (chat_id is None or message["chat"]["id"] == chat_id)
            and (thread_id is None or message.get("message_thread_id") == thread_id)
        ]

    def calls_to(self, method: str) -> list[TelegramCall]:
        return [call for call in self.calls if call.method == method]

    async def wait_for_sent(
        self, predicate: Callable[[Message], bool] | None = None, *, timeout: float = 10.0
    ) -> Message:
        """The first message the bot sent that ``predicate`` accepts, waiting for it."""
        found: list[Message] = []

        def ready() -> bool:
            found[:] = [m for m in self._sent if predicate is None or predicate(m)][:1]
            return bool(found)

        await self._wait(ready, timeout, "a sent message")
        return found[0]

    async def wait_for_call(
        self,
        method: str,
        predicate: Callable[[TelegramCall], bool] | None = None,
        *,
        timeout: float = 10.0,
    ) -> TelegramCall:
        """The first call of ``method`` that ``predicate`` accepts, waiting for it."""
        found: list[TelegramCall] = []

        def ready() -> bool:
            found[:] = [c for c in self.calls_to(method) if predicate is None or predicate(c)][:1]
            return bool(found)

        await self._wait(ready, timeout, f"a call of {method}")
        return found[0]

    def fail_next(self, method: str, failures: Iterable[TelegramFailure | int]) -> None:
        """Answer the next calls of ``method`` with these errors, in order, then normally again;
        a bare code is :meth:`TelegramFailure.of` it (429: ``retry_after`` 1)."""
        if method.lower() not in self._methods:
            raise ValueError(f"the fake has no Bot API method {method!r}")
        name = self._methods[method.lower()][0]
        queue = self._failures.setdefault(name, deque())
        queue.extend(
            f if isinstance(f, TelegramFailure) else TelegramFailure.of(f) for f in failures
        )

    # -- the server -----------------------------------------------------------------------------

    def app(self) -> Starlette:
        return Starlette(
            routes=[Route("/{path:path}", self._dispatch, methods=["GET", "POST"])],
        )

    async def start(self, port: int = 0) -> str:
        """Serve on ``127.0.0.1:port`` (0: any free port) in this event loop; the server's URL."""
        self.url = await self._server.start(self.app(), port)
        return self.url

    async def stop(self) -> None:
        """End the long polls, stop delivering to the webhook, stop serving."""
        async with self._changed:
            self._closing = True
            self._changed.notify_all()
        await self._stop_webhook_delivery()
        await self._server.stop()

    async def __aenter__(self) -> FakeTelegram:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _dispatch(self, http: Request) -> Response:
        token, _, method = http.path_params["path"].removeprefix("bot").partition("/")
        if not http.path_params["path"].startswith("bot") or not method or "/" in method:
            return await self._answer_error(TelegramFailure.of(404))
        params = await self._params(http)
        if token != self.token:
            return await self._answer_error(TelegramFailure.of(401), method, params)
        known = self._methods.get(method.lower())
        if known is None:
            return await self._answer_error(TelegramFailure.of(404), method, params)
        name, handler = known
        scripted = self._failures.get(name)
        if scripted:
            return await self._answer_error(scripted.popleft(), name, params)
        try:
            result = await handler(_Params(params))
        except _ApiError as error:
            return await self._answer_error(error.failure, name, params)
        if isinstance(result, Response):  # getUpdates' own answers
            await self._record(TelegramCall(name, params, result.status_code))
            return result
        await self._record(TelegramCall(name, params, 200))
        return JSONResponse({"ok": True, "result": result})

    async def _params(self, http: Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(http.query_params)
        body = await http.body()
        content_type = http.headers.get("content-type", "").split(";")[0].strip()
        if body and content_type == "application/json":
            decoded = json.loads(body)
            if isinstance(decoded, dict):
                params.update(decoded)
        elif body and content_type == "application/x-www-form-urlencoded":
            params.update(parse_qsl(body.decode(), keep_blank_values=True))
        elif content_type == "multipart/form-data":
            form = await http.form()
            params.update({key: value for key, value in form.items() if isinstance(value, str)})
        return params

    async def _answer_error(
        self,
        failure: TelegramFailure,
        method: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> Response:
        if method is not None:
            await self._record(TelegramCall(method, params or {}, failure.error_code))
        return JSONResponse(failure.to_json(), status_code=failure.error_code)

    async def _record(self, call: TelegramCall) -> None:
        async with self._changed:
            self.calls.append(call)
            self._changed.notify_all()

    async def _wait(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(ready), timeout)
            except TimeoutError:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}") from None

    # -- chats and messages ---------------------------------------------------------------------

    def _add_chat(self, chat: FakeChat) -> FakeChat:
        self._chats[chat.id] = chat
        self._message_ids.setdefault(chat.id, itertools.count(1))
        return chat

    def _chat(self, params: _Params) -> FakeChat:
        raw = params.text("chat_id")
        if raw is None or raw == "":
            raise _bad_request("chat_id is empty")
        if raw.startswith("@"):
            for chat in self._chats.values():
                if chat.username == raw[1:]:
                    return chat
            raise _bad_request("chat not found")
        chat_id = params.integer("chat_id")
        if chat_id is None or chat_id not in self._chats:
            raise _bad_request("chat not found")
        return self._chats[chat_id]

    def _message(
        self, chat: FakeChat, sender: FakeUser, text: str | None, thread_id: int | None
    ) -> Message:
        message: Message = {
            "message_id": next(self._message_ids[chat.id]),
            "from": sender.to_json(),
            "chat": chat.to_json(),
            "date": int(time.time()),
        }
        if thread_id is not None:
            topic = self._topics[chat.id][thread_id]
            message["message_thread_id"] = thread_id
            message["is_topic_message"] = True
            message["reply_to_message"] = topic["created"]
        if text is not None:
            message["text"] = text
        self._messages[chat.id, message["message_id"]] = message
        return message

    def _open_topic(
        self, chat: FakeChat, name: str, icon_color: int, by: FakeUser
    ) -> dict[str, Any]:
        if not chat.is_forum:
            raise _bad_request("the chat is not a forum")
        created = self._message(chat, by, None, None)
        thread_id = created["message_id"]
        topic = {"message_thread_id": thread_id, "name": name, "icon_color": icon_color}
        created["forum_topic_created"] = {"name": name, "icon_color": icon_color}
        created["message_thread_id"] = thread_id
        created["is_topic_message"] = True
        self._topics.setdefault(chat.id, {})[thread_id] = {**topic, "created": created}
        return topic

    # -- the methods ----------------------------------------------------------------------------

    async def _true(self, params: _Params) -> bool:
        return True

    async def _get_me(self, params: _Params) -> dict[str, Any]:
        return {
            **self.bot.to_json(),
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    async def _get_updates(self, params: _Params) -> Any:
        if self._webhook is not None:
            return JSONResponse(TelegramFailure(409, _WEBHOOK_CONFLICT).to_json(), status_code=409)
        offset = params.integer("offset") or 0
        limit = min(max(params.integer("limit") or MAX_LIMIT, 1), MAX_LIMIT)
        timeout = max(params.number("timeout") or 0.0, 0.0)
        async with self._changed:
            self._poll_generation += 1
            generation = self._poll_generation
            self._changed.notify_all()  # an earlier long poll is superseded
            self._confirm(offset)

            def ready() -> bool:
                return (
                    bool(self._updates)
                    or self._closing
                    or generation != self._poll_generation
                    or self._webhook is not None
                )

            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait_for(ready), timeout)
            if generation != self._poll_generation:
                failure = TelegramFailure.of(409)
                return JSONResponse(failure.to_json(), status_code=409)
            return list(itertools.islice(self._updates, limit))

    def _confirm(self, offset: int) -> None:
        if offset < 0:
            while len(self._updates) > -offset:
                self._updates.popleft()
            return
        while self._updates and self._updates[0]["update_id"] < offset:
            self._updates.popleft()

    async def _send_message(self, params: _Params) -> Message:
        chat = self._chat(params)
        text = params.text("text")
        if not text:
            raise _bad_request("message text is empty")
        thread_id = params.integer("message_thread_id")
        if thread_id is not None and thread_id not in self._topics.get(chat.id, {}):
            raise _bad_request("message thread not found")
        reply_to = self._reply_to(chat, params)
        message = self._message(chat, self.bot, text, thread_id)
        if reply_to is not None:
            message["reply_to_message"] = reply_to
        entities = params.obj("entities")
        if entities:
            message["entities"] = entities
        async with self._changed:
            self._sent.append(message)
            self._changed.notify_all()
        return message

    def _reply_to(self, chat: FakeChat, params: _Params) -> Message | None:
        reply = params.obj("reply_parameters") or {}
        if not isinstance(reply, dict):
            raise _bad_request("can't parse reply parameters JSON object")
        message_id = reply.get("message_id", params.integer("reply_to_message_id"))
        if message_id is None:
            return None
        allow_missing = bool(reply.get("allow_sending_without_reply")) or params.flag(
            "allow_sending_without_reply"
        )
        target_chat = reply.get("chat_id", chat.id)
        found = self._messages.get((int(target_chat), int(message_id)))
        if found is None and not allow_missing:
            raise _bad_request("message to be replied not found")
        return found

    async def _edit_message_text(self, params: _Params) -> Message:
        if params.text("inline_message_id"):
            raise _bad_request("MESSAGE_ID_INVALID")
        chat = self._chat(params)
        message_id = params.integer("message_id")
        text = params.text("text")
        if not text:
            raise _bad_request("message text is empty")
        message = self._messages.get((chat.id, message_id or 0))
        if message is None:
            raise _bad_request("message to edit not found")
        if message["from"]["id"] != self.bot.id:
            raise _bad_request("message can't be edited")
        if message.get("text") == text:
            raise _ApiError(TelegramFailure(400, _NOT_MODIFIED))
        message["text"] = text
        message["edit_date"] = int(time.time())
        async with self._changed:
            self._changed.notify_all()
        return message

    async def _create_forum_topic(self, params: _Params) -> dict[str, Any]:
        chat = self._chat(params)
        name = params.text("name")
        if not name:
            raise _bad_request("TOPIC_NAME_EMPTY")
        icon_color = params.integer("icon_color") or GENERAL_TOPIC_ICON_COLOR
        return self._open_topic(chat, name, icon_color, self.bot)

    async def _send_chat_action(self, params: _Params) -> bool:
        chat = self._chat(params)
        action = params.text("action")
        if not action:
            raise _bad_request("action is empty")
        self.chat_actions.append((chat.id, action, params.integer("message_thread_id")))
        return True

    async def _set_my_commands(self, params: _Params) -> bool:
        commands = params.obj("commands")
        if not isinstance(commands, list):
            raise _bad_request("can't parse commands JSON object")
        self.commands = commands
        return True

    async def _get_my_commands(self, params: _Params) -> list[dict[str, Any]]:
        return self.commands

    async def _delete_my_commands(self, params: _Params) -> bool:
        self.commands = []
        return True

    async def _set_webhook(self, params: _Params) -> Any:
        url = params.text("url") or ""
        if params.flag("drop_pending_updates"):
            self._updates.clear()
        await self._stop_webhook_delivery()
        if not url:
            self._webhook = None
            return True
        self._webhook = _Webhook(
            url=url,
            secret_token=params.text("secret_token"),
            max_connections=params.integer("max_connections") or 40,
            allowed_updates=params.obj("allowed_updates"),
        )
        async with self._changed:
            self._changed.notify_all()  # a long poll waiting now answers 409
        self._webhook_task = asyncio.create_task(self._deliver(self._webhook))
        return True

    async def _delete_webhook(self, params: _Params) -> bool:
        if params.flag("drop_pending_updates"):
            self._updates.clear()
        await self._stop_webhook_delivery()
        self._webhook = None
        return True

    async def _get_webhook_info(self, params: _Params) -> dict[str, Any]:
        hook = self._webhook
        info: dict[str, Any] = {
            "url": hook.url if hook else "",
            "has_custom_certificate": False,
            "pending_update_count": len(self._updates),
        }
        if hook is not None:
            info["max_connections"] = hook.max_connections
            if hook.allowed_updates is not None:
                info["allowed_updates"] = hook.allowed_updates
            if hook.last_error_date is not None:
                info["last_error_date"] = hook.last_error_date
                info["last_error_message"] = hook.last_error_message
        return info

    # -- webhook delivery -----------------------------------------------------------------------

    async def _stop_webhook_delivery(self) -> None:
        task, self._webhook_task = self._webhook_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _deliver(self, hook: _Webhook) -> None:
        headers = {SECRET_HEADER: hook.secret_token} if hook.secret_token else {}
        async with httpx.AsyncClient(timeout=10.0) as client:
            while True:
                async with self._changed:
                    await self._changed.wait_for(lambda: bool(self._updates) or self._closing)
                    if self._closing:
                        return
                    update = self._updates[0]
                if await self._post(client, hook, update, headers):
                    async with self._changed:
                        if self._updates and self._updates[0] is update:
                            self._updates.popleft()
                        self._changed.notify_all()
                else:
                    await asyncio.sleep(self.webhook_retry_s)

    async def _post(
        self,
        client: httpx.AsyncClient,
        hook: _Webhook,
        update: dict[str, Any],
        headers: dict[str, str],
    ) -> bool:
        try:
            answer = await client.post(hook.url, json=update, headers=headers)
        except httpx.HTTPError as error:
            hook.last_error_message = str(error) or type(error).__name__
        else:
            if answer.is_success:
                return True
            hook.last_error_message = (
                f"Wrong response from the webhook: {answer.status_code} {answer.reason_phrase}"
            )
        hook.last_error_date = int(time.time())
        return False
