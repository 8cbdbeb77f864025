"""A lost gateway in a real browser (docs/web.md, "Connection and drafts"): the banner with its
Retry, a message typed on the first screen that survives the gateway going away, a refused
send, a gateway restart on the same port and state directory and a reload, and then goes out
as the first message of a new chat titled by it; drafts per conversation; a refused send's
notice above the composer, never over it."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Locator, Page, WebSocket, expect

from clawline.config import Settings
from clawline.gateway.methods.web import family_service
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.testing.waiting import eventually
from tests.web.chat import WebChat
from tests.web.conftest import CONFIG, TOKEN
from tests.web.test_layout_browser import (
    DESKTOP,
    PHONE,
    box,
    inside_viewport,
    no_horizontal_overflow,
)

FIRST = "Plan the release party for Friday"
LATER = "second thought, not sent yet"
REFUSED = "this one is refused"
TOO_LONG_KEY = "agent:main:" + "x" * 5000  # over the gateway's key length: every call is refused


@contextlib.asynccontextmanager
async def gateway(state: Path, port: int = 0) -> AsyncIterator[RunningGateway]:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    config = Settings(state_dir=state, raw=CONFIG)
    async with running_gateway(state, gateway_settings=settings, settings=config, port=port) as gw:
        yield gw


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    """A page that logs no error but the browser's own line for each refused reconnection."""
    context = await browser.new_context(viewport=DESKTOP)
    opened = await context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))

    def on_console(message: Any) -> None:
        text: str = message.text
        refused = text.startswith("WebSocket connection to") and "ERR_CONNECTION_REFUSED" in text
        if message.type == "error" and not refused:
            errors.append(text)

    opened.on("console", on_console)
    try:
        yield opened
    finally:
        await context.close()
    assert errors == [], f"errors in the page: {errors}"


async def drafts(page: Page) -> dict[str, str]:
    saved = await page.evaluate("() => sessionStorage.getItem('clawline.drafts')")
    stored: dict[str, str] = json.loads(saved)["bySessionKey"] if saved else {}
    return stored


async def below(upper: Locator, lower: Locator) -> bool:
    """Whether ``upper`` ends above ``lower`` begins (so it cannot cover it)."""
    a, b = await box(upper), await box(lower)
    return a["y"] + a["height"] <= b["y"]


async def click_retry_if_shown(page: Page) -> None:
    """Retry at once if the page has not reconnected by itself yet (one turn in the page, so
    the button cannot vanish between the check and the click)."""
    await page.evaluate(
        "() => { const b = document.querySelector('[data-testid=connection-retry]');"
        " if (!b.hidden) b.click(); }"
    )


async def test_a_draft_survives_a_gateway_restart_and_a_reload(
    tmp_path: Path, page: Page, artifacts: Path
) -> None:
    state = tmp_path / "state"
    sockets: list[WebSocket] = []
    refused: list[WebSocket] = []  # a refused socket reports a socket error, not always a close

    def on_socket(socket: WebSocket) -> None:
        sockets.append(socket)
        socket.on("socketerror", lambda _: refused.append(socket))

    page.on("websocket", on_socket)
    composer = page.get_by_test_id("chat-composer-input")
    banner = page.get_by_test_id("connection-banner")
    banner_text = page.get_by_test_id("connection-banner-text")
    retry = page.get_by_test_id("connection-retry")

    async with gateway(state) as first:
        port = first.port
        chat = WebChat(page, first, artifacts)
        await chat.open("en", TOKEN)

        # The first screen: a composer at once, no conversation yet.
        await expect(chat.by("chat-title")).to_have_text("New chat")
        await expect(composer).to_be_visible()
        await expect(chat.by("session-row")).to_have_count(0)
        await expect(banner).to_be_hidden()
        await composer.fill(FIRST)
        assert await drafts(page) == {"": FIRST}
        opened = len(sockets)

    # The gateway is gone: the banner says so (a polite status) and offers Retry.
    await expect(banner_text).to_have_text("The connection to the gateway is lost. Reconnecting…")
    await expect(banner_text).to_have_attribute("role", "status")
    await expect(retry).to_be_visible()
    await expect(chat.by("connection-status")).to_have_text("Reconnecting…")

    # Sending now: nothing reaches the gateway, so nothing is emptied.
    await composer.press("Enter")
    await expect(banner_text).to_contain_text("Not sent: the gateway cannot be reached.")
    await expect(composer).to_have_value(FIRST)
    assert await below(banner, composer)
    await chat.shot("1-offline-draft-kept")
    await page.set_viewport_size(PHONE)  # the same on a phone: banner, box and Send all on screen
    await expect(page.locator("#sidebar")).to_be_hidden()  # slid out into its drawer
    assert await below(banner, composer)
    for part in [banner, composer, retry, chat.by("chat-composer-send")]:
        await inside_viewport(page, part)
    await no_horizontal_overflow(page)
    await chat.shot("1-offline-draft-kept-phone")
    await page.set_viewport_size(DESKTOP)

    # Retry tries at once: right after the second refused attempt (the next one is due 2 s
    # later), a click opens a new socket within a second.
    await eventually(lambda: len(sockets) >= opened + 2)
    failed = sockets[opened + 1]
    await eventually(lambda: failed.is_closed() or failed in refused)
    async with page.expect_websocket(timeout=1000):
        await retry.click()

    # A gateway again, on the same port and state directory: the page reconnects, the draft
    # is still in the box.
    async with gateway(state, port) as second:
        chat = WebChat(page, second, artifacts)
        await click_retry_if_shown(page)
        await expect(chat.by("connection-status")).to_have_text("Connected")
        await expect(banner).to_be_hidden()
        await expect(composer).to_have_value(FIRST)

        # …and after a reload.
        await page.reload()
        await expect(composer).to_have_value(FIRST)
        await expect(chat.by("chat-title")).to_have_text("New chat")

        # Now it sends: a new chat, titled by its first message; the box and the draft empty.
        await composer.press("Enter")
        await expect(page).to_have_url(re.compile("#session="))
        key = await chat.selected_key()
        await expect(chat.by("message-user")).to_have_text(f"You{FIRST}")
        await expect(composer).to_have_value("")
        await expect(chat.sidebar_row(key).locator(".session-title")).to_have_text(FIRST)
        await expect(chat.by("chat-title")).to_have_text(FIRST)
        await expect(chat.by("message-assistant")).to_have_count(1)
        assert await drafts(page) == {}
        await chat.shot("2-sent-after-restart")

        # Drafts are per conversation: a new chat starts empty (and is called "New chat"),
        # the first one gets its unsent text back, after a reload too.
        await composer.fill(LATER)
        other = await chat.new_chat()
        await expect(composer).to_have_value("")
        await expect(chat.sidebar_row(other).locator(".session-title")).to_have_text("New chat")
        await expect(chat.by("chat-title")).to_have_text("New chat")
        await page.reload()
        await expect(chat.by("chat-title")).to_have_text("New chat")
        await chat.sidebar_row(key).locator(".session-select").click()
        await expect(composer).to_have_value(LATER)

        # A send the gateway refuses keeps its text too; the notice sits above the composer.
        await page.evaluate(
            "(k) => { location.hash = 'session=' + encodeURIComponent(k); }", TOO_LONG_KEY
        )
        notice = chat.by("notice")
        await expect(notice).to_be_visible()
        await composer.fill(REFUSED)
        await composer.press("Enter")
        await expect(notice).to_contain_text("sessionKey")
        await expect(composer).to_have_value(REFUSED)
        assert await below(notice, composer)
        await chat.shot("3-refused-send-notice")
        await page.close()  # before its gateway stops, so it does not reconnect to a stopping one
        bridge = family_service(second.gateway).processes
    for process in bridge:
        assert process.returncode is not None, "the ACP bridge outlived its gateway"
