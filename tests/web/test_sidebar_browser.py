"""Signing in, the language switcher, and the sidebar's busy > unread > time-ago cue, in a
real browser."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect

from clawline.sessions import Cause
from clawline.testing.live_gateway import RunningGateway
from tests.web.chat import WebChat
from tests.web.conftest import TOKEN


async def test_token_login_and_language(
    web_gateway: RunningGateway, page: Page, artifacts: Path
) -> None:
    chat = WebChat(page, web_gateway, artifacts)
    await page.goto(web_gateway.http_url + "/")
    await expect(chat.by("login-form")).to_be_visible()
    await expect(chat.by("login-token")).to_be_focused()
    await chat.by("login-token").fill("wrong")
    await chat.by("login-token").press("Enter")
    await expect(chat.by("login-error")).to_contain_text("unauthorized: gateway token mismatch")
    await chat.shot("1-login-refused")
    await chat.by("login-token").fill(TOKEN)
    await chat.by("login-submit").click()
    await expect(chat.by("sidebar-new-chat")).to_have_text("New chat")
    assert await page.evaluate("() => sessionStorage.getItem('clawline.token')") == TOKEN

    # The language switcher applies at once and is remembered; the token survives a reload.
    await chat.by("language-select").select_option("ru")
    await expect(chat.by("sidebar-new-chat")).to_have_text("Новый чат")
    await page.reload()
    await expect(chat.by("sidebar-new-chat")).to_have_text("Новый чат")
    assert await page.evaluate("() => document.documentElement.lang") == "ru"
    await chat.by("language-select").select_option("ja")
    await expect(chat.by("connection-status")).to_have_text("接続済み")
    await chat.shot("2-japanese")

    # Signing out forgets the token.
    await page.get_by_role("button", name="サインアウト").click()
    await expect(chat.by("login-form")).to_be_visible()
    assert await page.evaluate("() => sessionStorage.getItem('clawline.token')") is None


async def test_busy_then_unread_then_read(
    web_gateway: RunningGateway, page: Page, artifacts: Path
) -> None:
    chat = WebChat(page, web_gateway, artifacts)
    await chat.open("en", TOKEN)
    first = await chat.new_chat()
    await chat.send("sleep 1500\nreply: finally")
    second = await chat.new_chat()
    row = chat.sidebar_row(first)
    await expect(row).to_have_attribute("data-cue", "busy")
    await expect(row.locator("svg[data-icon=loader]")).to_be_visible()
    await expect(row).to_have_attribute("data-cue", "unread", timeout=10_000)
    await expect(row).to_contain_text("Unread")
    await expect(chat.sidebar_row(second)).to_have_attribute("data-cue", "idle")
    await chat.shot("unread")
    await row.get_by_role("button").first.click()
    await expect(row).to_have_attribute("data-cue", "idle")
    await expect(chat.by("message-assistant").last.locator(".message-body")).to_have_text("finally")


async def test_a_session_on_another_channel_shows_where_it_talks(
    web_gateway: RunningGateway, page: Page, artifacts: Path
) -> None:
    chat = WebChat(page, web_gateway, artifacts)
    await chat.open("ru", TOKEN)
    key = await chat.new_chat()
    row = chat.sidebar_row(key)
    await expect(row.get_by_test_id("session-origin")).to_be_hidden()
    runtime = web_gateway.runtime
    origin = {"lastChannel": "matrix", "lastTo": "!r:hs"}
    await runtime.call(runtime.catalog.patch, key, origin, cause=Cause("patch"))
    await expect(row.get_by_test_id("session-origin")).to_have_text("через matrix")
    await chat.by("language-select").select_option("ja")
    await expect(row.get_by_test_id("session-origin")).to_have_text("matrix 経由")
    await chat.shot("channel-origin")
