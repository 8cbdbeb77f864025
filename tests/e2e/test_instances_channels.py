"""Two gateway processes on one PostgreSQL schema, both configured with the Telegram channel in
polling mode against the fake Bot API (docs/instances.md, "Who answers for what"): one instance
holds the channel's connection and polls, the other stands by; a message is answered once. The
holder is SIGKILLed: within a few leases the other takes the claim over and polls, a message
written meanwhile is answered once, and no reply goes out twice."""

from __future__ import annotations

import contextlib
import signal
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from clawline.client.connection import GatewayClient
from clawline.store import open_store
from clawline.store.base import Store
from clawline.testing.fake_telegram import FakeTelegram
from tests.conftest import PgSchemas
from tests.e2e.support import GatewayProcess, clean_env, gateway_process, message_events, until

pytestmark = pytest.mark.postgres

TOKEN = "instances-channels-token-0123456789"
LEASE_MS = 2000
TAKE_OVER_TIMEOUT_S = 5 * LEASE_MS / 1000
"""A few leases: the holder's lease lapses, it is taken over, then its claim is taken."""


def config(tg: FakeTelegram) -> str:
    return f"""
[gateway]
instanceLeaseMs = {LEASE_MS}

[agents]
echo_delay_ms = 0

[channels.telegram]
botToken = "{tg.token}"
apiBaseUrl = "{tg.base_url}"
pollTimeoutSeconds = 1
"""


@contextlib.asynccontextmanager
async def gateway(
    tmp_path: Path, name: str, tg: FakeTelegram, store_url: str
) -> AsyncIterator[GatewayProcess]:
    state = tmp_path / f"state-{name}"
    state.mkdir()
    (state / "config.toml").write_text(config(tg), encoding="utf-8")
    env = clean_env(
        state,
        CLAWLINE_GATEWAY_TOKEN=TOKEN,
        CLAWLINE_STORE_URL=store_url,
        PTB_TIMEDELTA="true",  # python-telegram-bot 22 warns on int time periods otherwise
    )
    async with gateway_process(env, tmp_path / f"{name}.log") as process:
        yield process


@contextlib.contextmanager
def opened(store_url: str) -> Iterator[Store]:
    store = open_store(store_url)
    try:
        yield store
    finally:
        store.close()


async def instance_id(url: str) -> str:
    async with await GatewayClient.connect(url, token=TOKEN) as client:
        health = await client.request("health", {})
    assert isinstance(health, dict)
    value = health["instanceId"]
    assert isinstance(value, str)
    return value


def texts(messages: list[dict[str, Any]]) -> list[str]:
    return [message["text"] for message in messages]


async def test_one_instance_polls_telegram_and_the_other_takes_over_when_it_dies(
    tmp_path: Path, pg_url: str, pg_schemas: PgSchemas
) -> None:
    store_url = f"{pg_url}?schema={pg_schemas.new('channels')}"
    async with contextlib.AsyncExitStack() as stack:
        tg = await stack.enter_async_context(FakeTelegram())
        store = stack.enter_context(opened(store_url))

        async def holder_is(instance: str) -> bool:
            return store.claims.holder("channel", "telegram") == instance

        a = await stack.enter_async_context(gateway(tmp_path, "a", tg, store_url))
        a_id = await instance_id(a.url)
        await until(lambda: holder_is(a_id), timeout=10, what="A holding the telegram channel")
        b = await stack.enter_async_context(gateway(tmp_path, "b", tg, store_url))
        b_id = await instance_id(b.url)
        standing_by = f"channel telegram: instance {a_id} holds its connection; this instance"
        assert f"{standing_by} stands by" in b.log()

        ada = tg.user("Ada")
        chat = tg.private_chat(ada)
        await tg.user_says(chat, ada, "reply: before")
        await tg.wait_for_sent(lambda message: message["text"] == "before")
        polls = len(tg.calls_to("getUpdates"))

        async def polled_twice_more() -> bool:
            return len(tg.calls_to("getUpdates")) >= polls + 2

        await until(polled_twice_more, timeout=10, what="two more long polls with B up")
        # A second poller would start with deleteWebhook and supersede A's long polls (409).
        assert len(tg.calls_to("deleteWebhook")) == 1
        assert [call for call in tg.calls_to("getUpdates") if call.status != 200] == []
        assert {claim.name for claim in store.claims.held_by(a_id, "channel")} == {
            "telegram",
            "webchat",
        }
        assert store.claims.held_by(b_id, "channel") == []

        async def all_delivered(count: int) -> bool:
            rows = store.outbox.page(None, None, 10)
            return len(rows) == count and all(row.status == "delivered" for row in rows)

        await until(lambda: all_delivered(1), timeout=10, what="the first reply marked delivered")

        assert await a.kill() == -signal.SIGKILL
        await tg.user_says(chat, ada, "reply: after")  # waits in Telegram for the next poller
        await until(
            lambda: holder_is(b_id), timeout=TAKE_OVER_TIMEOUT_S, what="B taking the channel over"
        )
        await tg.wait_for_sent(lambda message: message["text"] == "after")
        assert "channel telegram: this instance took its connection over" in b.log()
        assert len(tg.calls_to("deleteWebhook")) == 2  # B's poll loop started
        await until(lambda: all_delivered(2), timeout=10, what="both replies marked delivered")
        assert await b.terminate() == 0, b.log()

    assert texts(tg.sent_messages(chat)) == ["before", "after"]
    with opened(store_url) as store:
        roles = Counter(
            data.get("role")
            for _, data in message_events(store, f"agent:main:telegram:direct:{ada.id}")
        )
        assert store.claims.held_by(b_id, "channel") == []  # released at B's clean stop
        assert store.claims.holder("channel", "telegram") is None
    assert roles == {"user": 2, "assistant": 2}  # one run per message
