"""Layout and interaction in a real browser at a desktop (1280 x 800) and a phone (390 x 844)
size (docs/web.md, "Layout", "Keyboard and focus"): the phone layout fits (drawer, sheet,
composer), every pointer target is at least 24 x 24 px, the skip link, Escape, the focus ring
and the row's delete control, focus after opening a child and returning, and ``#session=``
navigation without a reload.

One gateway and one browser for the module; each test opens its own page. A family is made
once: a parent with two quick children (so the sub-agent toggle and the Tasks button show) and
a second conversation.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import (
    Browser,
    FloatRect,
    Locator,
    Page,
    ViewportSize,
    async_playwright,
    expect,
)

from clawline.client.connection import GatewayClient
from clawline.config import Settings
from clawline.gateway.methods.web import family_service
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.testing.waiting import settled
from tests.web.chat import WebChat
from tests.web.conftest import CHROMIUM, CONFIG, TOKEN

pytestmark = pytest.mark.asyncio(loop_scope="module")

PARENT = "agent:main:layout-parent"
OTHER = "agent:main:layout-other"
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}
SIGNED_IN = f"sessionStorage.setItem('clawline.token', {TOKEN!r})"

TARGETS = """() => {
  const selector = 'button, a[href], input, select, textarea, summary, [role=button]';
  const name = (el) => el.dataset.testid || el.getAttribute('aria-label') || el.className
    || el.tagName;
  return [...document.querySelectorAll(selector)]
    .filter((el) => el.checkVisibility({ visibilityProperty: true }) && !el.closest('[inert]'))
    .map((el) => {
      const r = el.getBoundingClientRect();
      return { name: `${el.tagName.toLowerCase()} ${name(el)}`, width: r.width, height: r.height };
    });
}"""


@dataclass(frozen=True, slots=True)
class Site:
    gateway: RunningGateway
    browser: Browser


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Site]:
    state = tmp_path_factory.mktemp("web-layout") / "state"
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    config = Settings(state_dir=state, raw=CONFIG)
    async with (
        running_gateway(state, gateway_settings=settings, settings=config) as gateway,
        async_playwright() as playwright,
    ):
        async with await GatewayClient.connect(gateway.url, token=TOKEN) as client:
            for key, message in [(OTHER, "hello"), (PARENT, "spawn 2 x: sleep 50\\nreply: done")]:
                params = {"sessionKey": key, "message": message, "idempotencyKey": key}
                await client.request_final("chat.send", params)
        await settled(gateway.runtime)
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield Site(gateway, browser)
        finally:
            await browser.close()
        bridge = family_service(gateway.gateway).processes
    for process in bridge:
        assert process.returncode is not None, "the ACP bridge outlived its gateway"


@contextlib.asynccontextmanager
async def opened(site: Site, size: ViewportSize, *, signed_in: bool = True) -> AsyncIterator[Page]:
    """A page of the given size (signed in through the tab's storage) that logs no error."""
    context = await site.browser.new_context(viewport=size, reduced_motion="reduce")
    if signed_in:
        await context.add_init_script(SIGNED_IN)
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        yield page
    finally:
        await context.close()
    assert errors == [], f"errors in the page: {errors}"


async def show(page: Page, site: Site, key: str) -> None:
    await page.goto(f"{site.gateway.http_url}/#session={key}")
    await expect(page.get_by_test_id("connection-status")).to_have_text("Connected")


async def box(locator: Locator) -> FloatRect:
    found = await locator.bounding_box()
    assert found is not None, locator
    return found


async def inside_viewport(page: Page, locator: Locator) -> None:
    b = await box(locator)
    size = page.viewport_size
    assert size is not None
    assert b["x"] >= 0, locator
    assert b["y"] >= 0, locator
    assert b["x"] + b["width"] <= size["width"], (locator, b)
    assert b["y"] + b["height"] <= size["height"], (locator, b)


async def no_horizontal_overflow(page: Page) -> None:
    widths = await page.evaluate("() => [document.scrollingElement.scrollWidth, innerWidth]")
    assert widths[0] <= widths[1], widths


async def settled_family(chat: WebChat) -> None:
    await expect(chat.toggle).to_have_text("Dispatched 2 subagents")
    await expect(chat.status).to_have_text("Subagents: Settled")
    await expect(chat.by("chat-composer-plan-toggle")).to_have_text("Tasks: 2")


async def small_targets(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = await page.evaluate(TARGETS)
    assert found, "no targets measured"
    return [t for t in found if t["width"] < 24 or t["height"] < 24]


async def test_the_phone_layout_fits(site: Site, artifacts: Path) -> None:
    async with opened(site, PHONE) as page:
        chat = WebChat(page, site.gateway, artifacts)
        await show(page, site, PARENT)
        await settled_family(chat)
        await no_horizontal_overflow(page)
        for test_id in [
            "chat-composer-input",
            "chat-composer-send",
            "acp-subagent-sessions-toggle",
            "chat-composer-plan-toggle",
            "sidebar-toggle",
            "chat-details-toggle",
        ]:
            await inside_viewport(page, chat.by(test_id))
        await expect(page.locator("#sidebar")).to_be_hidden()
        await chat.shot("phone-1-conversation")

        # The sub-agent panel opens above the composer, inside the screen.
        await chat.toggle.click()
        await inside_viewport(page, chat.panel)
        await no_horizontal_overflow(page)
        await chat.shot("phone-2-subagents")
        await page.keyboard.press("Escape")
        await expect(chat.panel).to_have_count(0)

        # The drawer: the menu button opens it; Escape closes it (focus back on the button).
        menu = chat.by("sidebar-toggle")
        drawer = page.locator("#sidebar")
        await menu.click()
        await expect(menu).to_have_attribute("aria-expanded", "true")
        await expect(drawer).to_be_visible()
        await inside_viewport(page, drawer)
        await expect(chat.sidebar_row(PARENT).locator(".session-select")).to_be_focused()
        await expect(page.locator("main")).to_have_attribute("inert", "")
        await no_horizontal_overflow(page)
        await chat.shot("phone-3-drawer")
        await page.keyboard.press("Escape")
        await expect(drawer).to_be_hidden()
        await expect(menu).to_be_focused()
        await expect(menu).to_have_attribute("aria-expanded", "false")

        # A tap outside closes it.
        await menu.click()
        await expect(drawer).to_be_visible()
        await page.mouse.click(PHONE["width"] - 10, PHONE["height"] // 2)
        await expect(drawer).to_be_hidden()

        # Choosing a conversation closes it and lands on that conversation's heading.
        await menu.click()
        await chat.sidebar_row(OTHER).locator(".session-select").click()
        await expect(drawer).to_be_hidden()
        assert await chat.selected_key() == OTHER
        await expect(chat.by("chat-title")).to_be_focused()
        await expect(chat.by("chat-title")).to_have_text("hello")

        # The details pane is a sheet along the bottom, inside the screen; Escape closes it.
        await chat.sidebar_row(PARENT).locator(".session-select").dispatch_event("click")
        await settled_family(chat)
        await chat.by("chat-details-toggle").click()
        sheet = chat.by("details-pane")
        await expect(sheet.get_by_test_id("lineage-node")).to_have_count(3)
        await expect(sheet.get_by_test_id("task-row")).to_have_count(2)
        await inside_viewport(page, sheet)
        sheet_box = await box(sheet)
        assert sheet_box["width"] == PHONE["width"]
        assert sheet_box["height"] <= PHONE["height"] * 0.75 + 1
        await no_horizontal_overflow(page)
        await chat.shot("phone-4-details-sheet")
        await page.keyboard.press("Escape")
        await expect(sheet).to_be_hidden()
        await expect(chat.by("chat-details-toggle")).to_be_focused()

        # A child conversation: marker, return (an icon here, named) and title fit the header.
        await chat.toggle.click()
        await chat.rows.first.click()
        await expect(chat.back).to_be_visible()
        await expect(chat.back).to_have_attribute("aria-label", "Return to parent conversation")
        for part in [chat.back, chat.by("chat-subagent-marker"), chat.by("chat-details-toggle")]:
            await inside_viewport(page, part)
        await no_horizontal_overflow(page)
        await chat.shot("phone-5-child")

        # New chat from the drawer: the drawer goes, the new chat's box has focus.
        await chat.by("sidebar-toggle").click()
        await chat.by("sidebar-new-chat").click()
        await expect(drawer).to_be_hidden()
        await expect(chat.by("chat-composer-input")).to_be_focused()
        await expect(chat.by("chat-title")).to_have_text("New chat")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
async def test_every_target_is_at_least_24px(
    site: Site, artifacts: Path, size: ViewportSize
) -> None:
    async with opened(site, size, signed_in=False) as page:
        chat = WebChat(page, site.gateway, artifacts)
        await page.goto(site.gateway.http_url + "/")
        await expect(chat.by("login-form")).to_be_visible()
        screens: dict[str, list[dict[str, Any]]] = {"login": await small_targets(page)}
        await chat.by("login-token").fill(TOKEN)
        await chat.by("login-submit").click()
        await page.goto(f"{site.gateway.http_url}/#session={PARENT}")
        await settled_family(chat)
        await expect(chat.by("tool-card").first).to_be_visible()
        screens["conversation"] = await small_targets(page)
        await chat.toggle.click()
        screens["subagent panel"] = await small_targets(page)
        await chat.by("chat-composer-plan-toggle").click()
        plan_rows = chat.by("chat-composer-plan-panel").get_by_test_id("task-row")
        await expect(plan_rows).to_have_count(2)
        screens["plan panel"] = await small_targets(page)
        await page.keyboard.press("Escape")
        await chat.by("chat-details-toggle").click()
        await expect(chat.by("details-pane").locator(".task-open").first).to_be_visible()
        screens["details"] = await small_targets(page)
        await chat.shot("details")
        await page.keyboard.press("Escape")
        if size is PHONE:
            await chat.by("sidebar-toggle").click()
        row = chat.sidebar_row(OTHER)
        await row.get_by_test_id("session-delete").click()
        await expect(row.get_by_test_id("session-delete-confirm")).to_be_visible()
        screens["sidebar, confirming a delete"] = await small_targets(page)
        await chat.shot("confirm-delete")
    assert screens == {name: [] for name in screens}


async def test_skip_link_escape_focus_ring_and_delete_control(site: Site, artifacts: Path) -> None:
    async with opened(site, DESKTOP) as page:
        chat = WebChat(page, site.gateway, artifacts)
        await show(page, site, PARENT)
        await settled_family(chat)
        url = page.url

        # The first Tab reaches the skip link, shown on screen; it leads to the conversation.
        await page.keyboard.press("Tab")
        skip = chat.by("skip-link")
        await expect(skip).to_be_focused()
        await expect(skip).to_have_text("Skip to conversation")
        await inside_viewport(page, skip)
        await chat.shot("skip-link")
        await page.keyboard.press("Enter")
        await expect(chat.by("chat-title")).to_be_focused()
        assert page.url == url, "the skip link keeps #session="

        # Escape closes the details pane from anywhere, focus back on its toggle.
        await chat.by("chat-details-toggle").click()
        await expect(chat.by("details-pane")).to_be_visible()
        await chat.by("chat-composer-input").focus()
        await page.keyboard.press("Escape")
        await expect(chat.by("details-pane")).to_be_hidden()
        await expect(chat.by("chat-details-toggle")).to_be_focused()

        # The focus ring of a sidebar row is drawn inside the row, within the scrolling list.
        row = chat.sidebar_row(PARENT)
        select = row.locator(".session-select")
        await select.focus()
        ring = await select.evaluate(
            "(el) => { const s = getComputedStyle(el); "
            "return [s.outlineStyle, parseFloat(s.outlineWidth), parseFloat(s.outlineOffset)]; }"
        )
        assert ring[0] != "none"
        assert ring[1] >= 2
        assert ring[1] + ring[2] <= 0, f"the ring reaches outside the row: {ring}"
        nav, row_box = await box(page.locator(".session-nav")), await box(select)
        assert nav["x"] <= row_box["x"]
        assert row_box["x"] + row_box["width"] <= nav["x"] + nav["width"]
        assert nav["y"] <= row_box["y"]

        # The row's delete shows on hover or focus only, and is red only under the pointer.
        delete = chat.sidebar_row(OTHER).get_by_test_id("session-delete")
        style = "(el) => [getComputedStyle(el).opacity, getComputedStyle(el).color]"
        hidden_style, muted = await delete.evaluate(style)
        danger = await page.evaluate(
            "() => getComputedStyle(document.documentElement).getPropertyValue('--danger')"
        )
        assert hidden_style == "0"
        await chat.sidebar_row(OTHER).locator(".session-title").hover()
        shown, color = await delete.evaluate(style)
        assert (shown, color) == ("1", muted)
        await delete.hover()
        red = await delete.evaluate("(el) => getComputedStyle(el).color")
        assert red != muted
        assert red == await page.evaluate(
            "(c) => { const d = document.createElement('i'); d.style.color = c;"
            " document.body.append(d); const v = getComputedStyle(d).color; d.remove();"
            " return v; }",
            danger.strip(),
        )
        await page.mouse.move(PHONE["width"], DESKTOP["height"] - 5)  # off the sidebar
        await select.focus()
        await page.keyboard.press("Tab")
        await expect(chat.sidebar_row(PARENT).get_by_test_id("session-delete")).to_be_focused()
        focused = chat.sidebar_row(PARENT).get_by_test_id("session-delete")
        assert await focused.evaluate("(el) => getComputedStyle(el).opacity") == "1"


async def test_focus_after_opening_a_child_and_returning(site: Site, artifacts: Path) -> None:
    async with opened(site, DESKTOP) as page:
        chat = WebChat(page, site.gateway, artifacts)
        await show(page, site, PARENT)
        await settled_family(chat)
        await chat.toggle.focus()
        await page.keyboard.press("Enter")
        await chat.rows.first.focus()
        child = await chat.rows.first.get_attribute("data-session-key")
        await page.keyboard.press("Enter")

        # In the child (no input box): focus on its heading, which names it.
        await expect(chat.back).to_be_visible()
        assert await chat.selected_key() == child
        await expect(chat.by("chat-title")).to_be_focused()
        await chat.shot("child-heading-focused")

        # Back in the parent: focus on the sub-agent toggle that led to the child.
        await chat.back.focus()
        await page.keyboard.press("Enter")
        await expect(chat.toggle).to_be_focused()
        assert await chat.selected_key() == PARENT
        await expect(chat.toggle).to_have_attribute("aria-expanded", "false")


async def test_hash_navigation_without_a_reload(site: Site, artifacts: Path) -> None:
    async with opened(site, DESKTOP) as page:
        chat = WebChat(page, site.gateway, artifacts)
        await show(page, site, PARENT)
        await settled_family(chat)
        await page.evaluate("() => { window.sameDocument = true; }")

        go = "(k) => { location.hash = 'session=' + encodeURIComponent(k); }"
        await page.evaluate(go, OTHER)
        await expect(chat.by("chat-title")).to_have_text("hello")
        await expect(chat.sidebar_row(OTHER).locator(".session-select")).to_have_attribute(
            "aria-current", "page"
        )
        await expect(chat.by("message-assistant")).to_have_count(1)

        # The browser's Back is a hash change too.
        await page.go_back()
        await expect(chat.toggle).to_have_text("Dispatched 2 subagents")
        assert await chat.selected_key() == PARENT

        # A chat without a message is "New chat", in the page's language.
        async with await GatewayClient.connect(site.gateway.url, token=TOKEN) as client:
            created = await client.request("sessions.create", {})
        assert isinstance(created, dict)
        fresh = created["key"]
        await page.evaluate(go, fresh)
        await expect(chat.by("chat-title")).to_have_text("New chat")
        await expect(chat.sidebar_row(fresh).locator(".session-title")).to_have_text("New chat")
        await chat.by("language-select").select_option("ja")
        await expect(chat.by("chat-title")).to_have_text("新しいチャット")
        assert await page.evaluate("() => window.sameDocument") is True
