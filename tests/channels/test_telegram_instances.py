"""Telegram's webhook mode with two gateways on one PostgreSQL store (docs/instances.md): only
the instance holding the channel's connection calls ``setWebhook``; the other stands by and
still takes the updates Telegram POSTs to it, and the reply it queues is delivered by the
holder (whose delivery loop no local commit woke). When the holder stops cleanly, the other
takes the connection over at its next heartbeat and sets the webhook itself. On SQLite (one
gateway per store) nothing is claimed and the adapter starts as before."""

from __future__ import annotations

import contextlib
from pathlib import Path

import httpx
import pytest

from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.testing import eventually
from clawline.testing.fake_telegram import FakeTelegram
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.conftest import PgSchemas

SECRET = "hook-secret_2"
LEASE_MS = 500


@pytest.fixture(autouse=True)
def _timedelta_periods(monkeypatch: pytest.MonkeyPatch) -> None:
    # python-telegram-bot 22 warns (an error here) on int time periods unless opted in.
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


def settings(state: Path, tg: FakeTelegram, store_url: str | None) -> Settings:
    telegram = {
        "botToken": tg.token,
        "apiBaseUrl": tg.base_url,
        "mode": "webhook",
        "webhookUrl": "https://example.invalid/channels/telegram",
        "webhookSecret": SECRET,
    }
    raw = {"gateway": {"instanceLeaseMs": LEASE_MS}, "channels": {"telegram": telegram}}
    return Settings(state_dir=state, raw=raw, store_url=store_url)


def running(
    tmp_path: Path, name: str, tg: FakeTelegram, store_url: str | None
) -> contextlib.AbstractAsyncContextManager[RunningGateway]:
    state = tmp_path / name
    return running_gateway(
        state, settings=settings(state, tg, store_url), gateway_settings=GatewaySettings(port=0)
    )


async def point_webhook_at(tg: FakeTelegram, gateway: RunningGateway) -> None:
    """Let the fake POST its updates to ``gateway``, as a load balancer in front of both
    instances might."""
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            f"{tg.base_url}{tg.token}/setWebhook",
            json={"url": f"{gateway.http_url}/channels/telegram", "secret_token": SECRET},
        )
    assert answer.status_code == 200


def delivered(gateway: RunningGateway) -> list[str]:
    """The texts of the delivered outbox rows, newest first."""
    rows = gateway.runtime.store.outbox.page("delivered", None, 10)
    return [row.text for row in rows]


def webhook_tasks(gateway: RunningGateway) -> list[str]:
    return [t.get_name() for t in gateway.runtime.background.tasks if "telegram" in t.get_name()]


@pytest.mark.postgres
async def test_only_the_holder_sets_the_webhook_and_any_instance_takes_updates(
    tmp_path: Path, pg_url: str, pg_schemas: PgSchemas
) -> None:
    store_url = f"{pg_url}?schema={pg_schemas.new('telegram_hook')}"
    async with contextlib.AsyncExitStack() as stack:
        tg = await stack.enter_async_context(FakeTelegram())
        first = contextlib.AsyncExitStack()
        stack.push_async_callback(first.aclose)
        a = await first.enter_async_context(running(tmp_path, "a", tg, store_url))
        await tg.wait_for_call("setWebhook")
        b = await stack.enter_async_context(running(tmp_path, "b", tg, store_url))
        assert "telegram" in a.runtime.connections.held
        assert b.runtime.connections.held == frozenset()
        assert b.runtime.connections.delivered == frozenset()
        assert webhook_tasks(b) == []  # no setWebhook under way on B, and none made:
        assert len(tg.calls_to("setWebhook")) == 1

        await point_webhook_at(tg, b)
        ada = tg.user("Ada")
        chat = tg.private_chat(ada)
        await tg.user_says(chat, ada, "reply: one")
        reply = await tg.wait_for_sent(lambda message: message["text"] == "one")
        assert reply["chat"]["id"] == chat.id
        await eventually(lambda: delivered(b) == ["one"])

        await first.aclose()  # A stops cleanly and gives its claims up
        await eventually(lambda: "telegram" in b.runtime.connections.held, timeout=5)
        await eventually(lambda: len(tg.calls_to("setWebhook")) == 3, timeout=5)  # B's own
        assert tg.calls_to("setWebhook")[-1].params["url"].startswith("https://example.invalid")
        await point_webhook_at(tg, b)
        await tg.user_says(chat, ada, "reply: two")
        await tg.wait_for_sent(lambda message: message["text"] == "two")
        await eventually(lambda: tg.pending_updates == [])
        await eventually(lambda: delivered(b) == ["two", "one"])
        assert [message["text"] for message in tg.sent_messages(chat)] == ["one", "two"]


async def test_on_sqlite_nothing_is_claimed_and_the_adapter_starts(tmp_path: Path) -> None:
    async with FakeTelegram() as tg, running(tmp_path, "only", tg, None) as gateway:
        runtime = gateway.runtime
        assert runtime.instance.exclusive
        await tg.wait_for_call("setWebhook")
        assert runtime.connections.delivered is None  # every channel's rows
        instance_id = runtime.instance.instance_id
        assert await runtime.call(runtime.store.claims.held_by, instance_id, "channel") == []
