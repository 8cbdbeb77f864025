"""The ``telegram`` channel: a Telegram bot through the Bot API (python-telegram-bot's ``Bot``).

- **inbound**: in ``polling`` mode (the default) a ``getUpdates`` long-polling loop, a task of
  the runtime's background group started by :meth:`TelegramChannel.start` and cancelled when
  the runtime stops; in ``webhook`` mode the adapter sets the webhook and the gateway serves
  ``POST /channels/telegram`` (:mod:`clawline.gateway.telegram_endpoint`), which checks
  ``X-Telegram-Bot-Api-Secret-Token`` in constant time. A text message becomes an
  :class:`~clawline.channels.inbox.InboundMessage` (``to``: the chat id, ``sender``: the user
  id, ``chat``: ``direct`` in a private chat else ``group``, ``message_id``
  ``<chat>:<message>``; in a forum topic ``thread_id`` is the topic's conversation id
  ``<chat>:topic:<message_thread_id>``, since topic ids are only unique inside their chat);
  ``/focus``, ``/unfocus`` and ``/subagents`` are the channel commands
  (:mod:`clawline.channels.commands`), answered in the same chat or topic. Of several
  gateway instances on one store only the one holding the channel's connection polls or sets
  the webhook (:mod:`clawline.channels.connections`); every instance takes webhook POSTs
  (:meth:`TelegramChannel.stand_by`).
- **outbound**: :meth:`TelegramChannel.send` calls ``sendMessage`` (in the topic when the
  target is one), split at 4096 characters. ``429`` → tried again after its ``retry_after``;
  ``403`` (the bot was blocked or kicked) and ``400`` (``chat not found``, ``message thread not
  found``, …) → given up; timeouts, 5xx and connection errors → tried again. Telegram has no
  idempotency key: a crash after Telegram accepted a message and before the outbox marked it
  ``delivered`` sends it again on the next start (docs/channels.md, "Telegram").
- **threads**: forum topics. Inside a topic a thread spawn binds that topic (``current``); in a
  forum's main chat it opens a topic for the child (``child``: ``createForumTopic``); in other
  chats it binds the chat itself (``current``).

The bot token is never logged: clawline's own messages never carry it, and the adapter masks
it in what ``httpx`` and python-telegram-bot log (their request URLs contain it).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hmac
import logging
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from telegram import Bot, Message, Update
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.request import HTTPXRequest

from clawline.channels.base import (
    BindingCapabilities,
    ChannelAdapter,
    ChannelContext,
    ChannelFeatures,
    ChannelStatus,
    ConversationRef,
    DeliveryFailed,
    InboundMessage,
    Placement,
    SpawningResult,
    SubagentSpawning,
    TargetGone,
    split_message,
)
from clawline.channels.inbox import InboundRefused
from clawline.channels.thread_bindings.planning import spawning_from_plan
from clawline.config import DEFAULT_ACCOUNT_ID
from clawline.errors import ClawlineError, InvalidInput

if TYPE_CHECKING:
    from clawline.background import Background
    from clawline.channels.inbox import ChannelInbox
    from clawline.config import TelegramChannelConfig
    from clawline.records.outbox import OutboxItem

log = logging.getLogger("clawline.channels.telegram")

TELEGRAM = "telegram"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
MAX_MESSAGE_LENGTH = 4096
TOPIC = ":topic:"
MAX_TOPIC_NAME = 128
ALLOWED_UPDATES = ["message"]
POLL_BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)
"""The waits after failed ``getUpdates`` calls in a row (the last one repeats)."""
_LOGGERS_WITH_URLS = ("httpx", "httpcore", "telegram")


class TelegramUnauthorized(InvalidInput):
    """A webhook POST without the configured secret token (or with another one)."""


def topic_conversation(chat_id: int | str, thread_id: int | str) -> str:
    """A forum topic's conversation id: ``<chat>:topic:<message_thread_id>``."""
    return f"{chat_id}{TOPIC}{thread_id}"


def _split_target(to: str, thread_id: str | None) -> tuple[str, int | None]:
    """``(chat_id, message_thread_id)`` of an outbox target: ``to`` is a chat id or a topic's
    conversation id (a completion sent to a bound topic), ``thread_id`` a topic's conversation
    id or a bare ``message_thread_id``."""
    chat, _, topic = to.partition(TOPIC)
    thread = thread_id or topic or None
    if thread is not None and TOPIC in thread:
        thread = thread.partition(TOPIC)[2]
    try:
        return chat, None if thread is None else int(thread)
    except ValueError:
        raise TargetGone(f"telegram: not a topic id: {thread!r}") from None


def _seconds(value: int | dt.timedelta) -> float:
    return value.total_seconds() if isinstance(value, dt.timedelta) else float(value)


class _Redact(logging.Filter):
    """Masks the bot token in a record (the library loggers put request URLs in theirs)."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self._secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if self._secret in message:
            record.msg = message.replace(self._secret, "<bot-token>")
            record.args = None
        return True


class TelegramChannel(ChannelAdapter):
    """The Telegram channel adapter (module docstring)."""

    id = TELEGRAM
    default_placement: Placement = "child"
    """As in OpenClaw, thread spawns are opt-in on Telegram (``threadBindings.spawn*``);
    :meth:`placement_for` decides per chat."""
    features = ChannelFeatures(typing=True, edits=True, max_message_length=MAX_MESSAGE_LENGTH)

    def __init__(
        self, config: TelegramChannelConfig, *, env: Mapping[str, str] | None = None
    ) -> None:
        environment = os.environ if env is None else env
        token = config.token(environment)
        if token is None:
            raise InvalidInput(
                "[channels.telegram] needs a bot token (botToken, botTokenEnv or botTokenFile)"
            )
        self._token = token
        self._mode = config.mode
        self._webhook_url = config.webhook_url
        self._secret = config.secret(environment)
        self._poll_timeout = config.poll_timeout_seconds
        self._request = HTTPXRequest(connection_pool_size=8)
        self._updates_request = HTTPXRequest(
            connection_pool_size=1, read_timeout=10.0, connect_timeout=10.0
        )
        self.bot = Bot(
            token,
            base_url=config.api_base_url,
            base_file_url=config.api_base_url.replace("/bot", "/file/bot"),
            request=self._request,
            get_updates_request=self._updates_request,
        )
        self._ready_lock = asyncio.Lock()
        self._ready = False
        self._connected = False
        self._last_event_at: int | None = None
        self._inbox: ChannelInbox | None = None
        self._forums: set[str] = set()
        self._parts_sent: dict[int, tuple[int, str | None]] = {}
        self._redact = _Redact(token)
        self._filtered: list[logging.Logger] = []
        self._mask_library_logs()

    # --- the token stays out of the logs -------------------------------------------------------

    def _mask_library_logs(self) -> None:
        names = [
            name
            for name in logging.Logger.manager.loggerDict
            if name.startswith(tuple(f"{prefix}." for prefix in _LOGGERS_WITH_URLS))
        ]
        for name in (*_LOGGERS_WITH_URLS, *names):
            logger = logging.getLogger(name)
            logger.addFilter(self._redact)
            self._filtered.append(logger)

    def _safe(self, error: BaseException | str) -> str:
        text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        return text.replace(self._token, "<bot-token>")

    # --- threads -------------------------------------------------------------------------------

    def capabilities(self, account_id: str) -> BindingCapabilities:
        return BindingCapabilities(
            adapter_available=True, bind_supported=True, placements=("current", "child")
        )

    def placement_for(self, context: ChannelContext) -> Placement:
        """``current`` inside a topic and in chats without topics; ``child`` (a new topic) in a
        forum's main chat."""
        if context.thread_id:
            return "current"
        return "child" if context.to in self._forums else "current"

    async def create_child_conversation(
        self, account_id: str, parent: ConversationRef, *, session_key: str, label: str | None
    ) -> ConversationRef:
        chat = parent.parent_conversation_id or parent.conversation_id
        name = (label or session_key)[:MAX_TOPIC_NAME]
        try:
            await self._prepare()
            topic = await self.bot.create_forum_topic(chat_id=chat, name=name)
        except TelegramError as error:
            raise ClawlineError(self._safe(error.message)) from None
        return ConversationRef(
            topic_conversation(chat, topic.message_thread_id), parent_conversation_id=chat
        )

    @property
    def has_subagent_spawning_hook(self) -> bool:
        return True

    async def subagent_spawning(self, event: SubagentSpawning) -> SpawningResult | None:
        return await spawning_from_plan(self, event)

    # --- lifecycle -----------------------------------------------------------------------------

    async def _prepare(self) -> None:
        """``getMe`` once (python-telegram-bot's ``initialize``)."""
        if self._ready:
            return
        async with self._ready_lock:
            if not self._ready:
                await self.bot.initialize()
                self._ready = True

    async def start(self, inbox: ChannelInbox, background: Background) -> None:
        """Poll, or set the webhook (the instance holding the connection, on a shared store)."""
        self._inbox = inbox
        if self._mode == "webhook":
            background.spawn(self._set_webhook(), name="telegram webhook")
        else:
            background.spawn(self._poll(), name="telegram polling")

    async def stand_by(self, inbox: ChannelInbox) -> None:
        """Another instance polls or sets the webhook; in webhook mode Telegram may POST to this
        one all the same (behind a load balancer), so its updates are taken here too."""
        self._inbox = inbox

    async def _retrying(self, what: str, attempt: int, error: BaseException) -> None:
        wait = POLL_BACKOFF_S[min(attempt, len(POLL_BACKOFF_S) - 1)]
        if isinstance(error, RetryAfter):
            wait = max(wait, _seconds(error.retry_after))
        log.warning("telegram: %s failed (%s); again in %.0f s", what, self._safe(error), wait)
        await asyncio.sleep(wait)

    async def _set_webhook(self) -> None:
        attempt = 0
        while True:
            try:
                await self._prepare()
                await self.bot.set_webhook(
                    url=self._webhook_url or "",
                    secret_token=self._secret,
                    allowed_updates=ALLOWED_UPDATES,
                )
                log.info("telegram: webhook set")
                return
            except (TelegramError, OSError) as error:
                await self._retrying("setWebhook", attempt, error)
                attempt += 1

    async def _poll(self) -> None:
        """The ``getUpdates`` loop: runs until cancelled (the runtime stopping)."""
        attempt = 0
        while True:
            try:
                await self._prepare()
                await self.bot.delete_webhook()
                break
            except (TelegramError, OSError) as error:
                await self._retrying("connecting", attempt, error)
                attempt += 1
        offset: int | None = None
        attempt = 0
        while True:
            try:
                updates = await self.bot.get_updates(
                    offset=offset, timeout=self._poll_timeout, allowed_updates=ALLOWED_UPDATES
                )
            except (TelegramError, OSError) as error:
                self._connected = False
                if isinstance(error, InvalidToken):
                    log.error("telegram: the bot token was refused")
                await self._retrying("getUpdates", attempt, error)
                attempt += 1
                continue
            self._connected = True
            attempt = 0
            for update in updates:
                offset = update.update_id + 1
                await self.handle_update(update)

    def status(self) -> ChannelStatus:
        polling = self._mode == "polling"
        return ChannelStatus(
            connected=self._connected if polling else self._ready,
            last_event_at=self._last_event_at,
        )

    async def aclose(self) -> None:
        for logger in self._filtered:
            logger.removeFilter(self._redact)
        self._filtered.clear()
        with contextlib.suppress(Exception):
            await self._request.shutdown()
        with contextlib.suppress(Exception):
            await self._updates_request.shutdown()

    # --- inbound -------------------------------------------------------------------------------

    @property
    def accepts_webhook(self) -> bool:
        """Webhook mode with a secret: the gateway's ``POST /channels/telegram`` takes updates."""
        return self._mode == "webhook" and self._secret is not None and self._inbox is not None

    def check_secret(self, given: str | None) -> None:
        """Raise :class:`TelegramUnauthorized` unless ``given`` is the webhook secret (compared
        in constant time)."""
        expected = self._secret
        if expected is None or not hmac.compare_digest((given or "").encode(), expected.encode()):
            raise TelegramUnauthorized("unauthorized: Telegram secret token missing or wrong")

    async def receive_webhook(self, body: object) -> None:
        """One update POSTed by Telegram (the secret already checked)."""
        if not isinstance(body, dict):
            raise InboundRefused("telegram update: the body must be a JSON object")
        try:
            update = Update.de_json(body, self.bot)
        except (TelegramError, KeyError, TypeError, ValueError) as error:
            raise InboundRefused(f"telegram update: {type(error).__name__}") from None
        await self.handle_update(update)

    def inbound(self, message: Message) -> InboundMessage | None:
        """The inbound message of a Telegram message, ``None`` for one without text or sender."""
        if message.text is None or message.from_user is None:
            return None
        chat = message.chat
        if chat.is_forum:
            self._forums.add(str(chat.id))
        thread = None
        if message.is_topic_message and message.message_thread_id is not None:
            thread = topic_conversation(chat.id, message.message_thread_id)
        return InboundMessage(
            channel=TELEGRAM,
            account_id=DEFAULT_ACCOUNT_ID,
            to=str(chat.id),
            sender=str(message.from_user.id),
            text=message.text,
            message_id=f"{chat.id}:{message.message_id}",
            chat="direct" if chat.type == "private" else "group",
            thread_id=thread,
        )

    async def handle_update(self, update: Update) -> None:
        """Route one update: a command is answered here, a text message goes to the inbox. A
        failure is logged, never raised (the next update still comes)."""
        inbox = self._inbox
        message = update.message
        if inbox is None or message is None:
            return
        self._last_event_at = time.time_ns() // 1_000_000
        inbound = self.inbound(message)
        if inbound is None:
            return
        try:
            command = _command(inbound.text, self.bot.username if self._ready else None)
            if command is not None and inbox.commands is not None:
                name, argument = command
                if inbox.commands.knows(name):
                    answer = await inbox.commands.run(inbound, name, argument)
                    await self._answer(message, answer)
                    return
            await inbox.receive(inbound)
        except (ClawlineError, TelegramError, OSError) as error:
            log.warning("telegram: update %s not handled: %s", update.update_id, self._safe(error))

    async def _answer(self, message: Message, text: str) -> None:
        thread = message.message_thread_id if message.is_topic_message else None
        await self.bot.send_message(
            chat_id=message.chat.id, text=text[:MAX_MESSAGE_LENGTH], message_thread_id=thread
        )

    # --- outbound ------------------------------------------------------------------------------

    async def send(self, item: OutboxItem) -> str | None:
        chat, thread = _split_target(item.target.to, item.target.thread_id)
        parts = split_message(item.text, self.features.max_message_length)
        done, first = self._parts_sent.get(item.id, (0, None)) if item.id is not None else (0, None)
        try:
            await self._prepare()
            for index in range(done, len(parts)):
                sent = await self.bot.send_message(
                    chat_id=chat, text=parts[index], message_thread_id=thread
                )
                first = first or str(sent.message_id)
                if item.id is not None:
                    self._parts_sent[item.id] = (index + 1, first)
        except RetryAfter as error:
            raise DeliveryFailed(
                f"telegram: {error.message}", retry_after_s=_seconds(error.retry_after)
            ) from None
        except ChatMigrated as error:
            raise TargetGone(f"telegram: the group moved to chat {error.new_chat_id}") from None
        except (Forbidden, BadRequest) as error:  # before NetworkError: BadRequest is one
            raise TargetGone(f"telegram: {self._safe(error.message)}") from None
        except (TimedOut, NetworkError, InvalidToken, TelegramError) as error:
            raise DeliveryFailed(f"telegram: {self._safe(error.message)}") from None
        except OSError as error:
            raise DeliveryFailed(f"telegram: {self._safe(error)}") from None
        if item.id is not None:
            self._parts_sent.pop(item.id, None)
        return first


def _command(text: str, username: str | None) -> tuple[str, str] | None:
    """``(name, argument)`` of a ``/command[@bot] argument`` text; ``None`` for another text
    or a command addressed to another bot."""
    if not text.startswith("/"):
        return None
    head, _, argument = text.partition(" ")
    name, _, bot = head[1:].partition("@")
    if bot and username is not None and bot.lower() != username.lower():
        return None
    return (name, argument.strip()) if name else None
