"""The web chat seen through its test ids (ClawX's; docs/web.md): a small page
object for the browser tests, plus the localized strings they expect."""

# ruff: noqa: RUF001  (the Chinese strings use full-width punctuation on purpose)
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from playwright.async_api import Locator, Page, expect

from clawline.testing.live_gateway import RunningGateway

__all__ = ["STRINGS", "Strings", "WebChat"]


@dataclass(frozen=True, slots=True)
class Strings:
    count: str
    expand: str
    collapse: str
    toggle: str
    running: str
    settled: str
    aggregate: str
    open: str
    marker: str
    back: str

    def dispatched(self, n: int) -> str:
        return self.count.format(n=n)

    def toggle_label(self, n: int, *, expanded: bool) -> str:
        action = self.collapse if expanded else self.expand
        return self.toggle.format(action=action, count=self.dispatched(n))

    def status(self, *, busy: bool) -> str:
        return self.aggregate.format(status=self.running if busy else self.settled)


STRINGS = {
    "en": Strings(
        count="Dispatched {n} subagents",
        expand="Expand subagent sessions",
        collapse="Collapse subagent sessions",
        toggle="{action}, {count}",
        running="Running",
        settled="Settled",
        aggregate="Subagents: {status}",
        open="Open subagent ",
        marker="Subagent",
        back="Return to parent conversation",
    ),
    "zh": Strings(
        count="已派出 {n} 个子智能体",
        expand="展开子智能体会话",
        collapse="折叠子智能体会话",
        toggle="{action}，{count}",
        running="运行中",
        settled="已结束",
        aggregate="子智能体：{status}",
        open="打开子智能体 ",
        marker="子智能体",
        back="返回父会话",
    ),
}


class WebChat:
    def __init__(self, page: Page, gateway: RunningGateway, artifacts: Path) -> None:
        self.page = page
        self.gateway = gateway
        self.artifacts = artifacts

    def by(self, test_id: str) -> Locator:
        return self.page.get_by_test_id(test_id)

    @property
    def toggle(self) -> Locator:
        return self.by("acp-subagent-sessions-toggle")

    @property
    def status(self) -> Locator:
        return self.by("acp-subagent-sessions-status")

    @property
    def panel(self) -> Locator:
        return self.by("acp-subagent-sessions-panel")

    @property
    def rows(self) -> Locator:
        return self.by("acp-subagent-session-row")

    @property
    def back(self) -> Locator:
        return self.by("chat-subagent-return")

    def sidebar_row(self, key: str) -> Locator:
        return self.page.locator(f'[data-testid="session-row"][data-session-key="{key}"]')

    async def open(self, locale: str, token: str) -> None:
        """Load the page, pick the language on the token form, sign in."""
        await self.page.goto(self.gateway.http_url + "/")
        await self.by("login-language").select_option(locale)
        await self.by("login-token").fill(token)
        await self.by("login-submit").click()
        await expect(self.by("sidebar-new-chat")).to_be_visible()

    async def new_chat(self) -> str:
        before = self.page.url
        await self.by("sidebar-new-chat").click()
        await expect(self.page).not_to_have_url(before)
        await expect(self.by("chat-composer-input")).to_be_focused()
        return await self.selected_key()

    async def selected_key(self) -> str:
        """The selected conversation, from the page's ``#session=<key>``."""
        url = self.page.url
        assert "#session=" in url, url
        return unquote(url.split("#session=", 1)[1])

    async def send(self, text: str) -> None:
        await self.by("chat-composer-input").fill(text)
        await self.by("chat-composer-input").press("Enter")

    async def shot(self, name: str) -> None:
        await self.page.screenshot(path=str(self.artifacts / f"{name}.png"))
