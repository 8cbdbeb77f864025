"""Acceptance (docs/instances.md): the web chat connected to gateway B follows, live, a family
that a client of gateway A makes — two gateways on one PostgreSQL schema, a real Chromium on B.
The children's runs spread over both instances; B's page shows them dispatched, running, then
settled, without a reload."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from clawline.client.connection import GatewayClient
from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.conftest import PgSchemas
from tests.web.chat import STRINGS, WebChat
from tests.web.conftest import CONFIG, TOKEN

pytestmark = pytest.mark.postgres

PARENT = "agent:main:shared-family"
SLOW_CHILDREN = "spawn 3 x: sleep 2500\nreply: done"
SETTLE_MS = 20_000


@pytest.fixture
async def two_gateways(
    tmp_path: Path, pg_url: str, pg_schemas: PgSchemas
) -> AsyncIterator[tuple[RunningGateway, RunningGateway]]:
    store_url = f"{pg_url}?schema={pg_schemas.new('web')}"
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    async with contextlib.AsyncExitStack() as stack:
        running = []
        for name in "ab":
            state = tmp_path / name
            config = replace(Settings(state_dir=state, raw=CONFIG), store_url=store_url)
            running.append(
                await stack.enter_async_context(
                    running_gateway(state, gateway_settings=settings, settings=config)
                )
            )
        yield running[0], running[1]


async def test_the_web_chat_on_b_follows_a_family_made_through_a(
    two_gateways: tuple[RunningGateway, RunningGateway], page: Page, artifacts: Path
) -> None:
    a, b = two_gateways
    assert a.gateway.instance.instance_id != b.gateway.instance.instance_id
    text = STRINGS["en"]
    async with await GatewayClient.connect(a.url, token=TOKEN) as on_a:
        await on_a.request_final(
            "chat.send", {"sessionKey": PARENT, "message": "hello", "idempotencyKey": "first"}
        )
        chat = WebChat(page, b, artifacts)
        await chat.open("en", TOKEN)
        await page.goto(f"{b.http_url}/#session={PARENT}")
        await expect(chat.sidebar_row(PARENT)).to_be_visible()
        await expect(chat.by("chat-composer-input")).to_be_visible()

        ack = await on_a.request(
            "chat.send",
            {"sessionKey": PARENT, "message": SLOW_CHILDREN, "idempotencyKey": "family"},
        )
        assert isinstance(ack, dict)
        assert ack["status"] == "started"

        # B's page hears of A's children as they are spawned and while they run…
        await expect(chat.toggle).to_have_text(text.dispatched(3))
        await expect(chat.status).to_have_text(text.status(busy=True))
        await chat.toggle.click()
        await expect(chat.rows).to_have_count(3)
        await chat.shot("1-running-seen-from-b")

        # …and as they settle, wherever they ran.
        await expect(chat.status).to_have_text(text.status(busy=False), timeout=SETTLE_MS)
        await expect(chat.by("acp-subagent-session-status").first).to_contain_text(text.settled)
        await chat.shot("2-settled-seen-from-b")

    records = await a.runtime.call(a.runtime.store.runs.for_requester, PARENT)
    assert len(records) == 3
    assert all(not record.active for record in records)
