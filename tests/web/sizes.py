"""Screenshots of one state at both sizes the web chat is designed for: a desktop window
(1280 x 800, the page fixture's) and a phone (390 x 844)."""

from __future__ import annotations

from playwright.async_api import ViewportSize, expect

from tests.web.chat import WebChat

__all__ = ["DESKTOP", "PHONE", "both_sizes"]

DESKTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE: ViewportSize = {"width": 390, "height": 844}


async def both_sizes(chat: WebChat, name: str, *, drawer: bool = False) -> None:
    """``<name>-desktop.png`` and ``<name>-phone.png`` in the test's artifacts directory;
    ``drawer``: on the phone, with the conversation drawer open (where the sidebar lives)."""
    page = chat.page
    sidebar = page.locator("#sidebar")
    await chat.shot(f"{name}-desktop")
    await page.set_viewport_size(PHONE)
    if drawer:
        await chat.by("sidebar-toggle").click()
        await expect(sidebar).to_be_in_viewport(ratio=1)
    else:
        await expect(sidebar).not_to_be_in_viewport()  # the drawer has slid out
    await chat.shot(f"{name}-phone")
    if drawer:
        await page.keyboard.press("Escape")
        await expect(sidebar).not_to_be_in_viewport()
    await page.set_viewport_size(DESKTOP)
    await expect(sidebar).to_be_in_viewport(ratio=1)
