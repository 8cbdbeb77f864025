"""Acceptance: sub-agent sessions in their parent conversation (docs/web.md), in a real
Chromium against a real gateway whose offline model spawns slow children, in English and in
Chinese.

One scenario per language, in order: spawn two children (count, spinner, "Running"), children
absent from the sidebar, the panel (above the toggle, rows), a third child appears live while
the panel stays open, everything settles (bot icon, "Settled"), a reload restores the family,
a child opens with marker, no input box and a return action, returning switches back with the
panel closed, and deleting the parent removes the return action and keeps the child.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from clawline.store.base import SessionQuery
from clawline.testing.live_gateway import RunningGateway
from tests.web.chat import STRINGS, WebChat
from tests.web.conftest import TOKEN

SLOW_CHILDREN = "spawn 2 x: sleep 2500\\nreply: done"
QUICK_CHILD = "spawn: sleep 300\\nreply: third"
SETTLE_S = 15_000


async def children_in_catalog(gateway: RunningGateway, parent: str) -> list[str]:
    services = gateway.runtime
    page = await services.call(services.catalog.page, SessionQuery(spawned_by=parent), limit=50)
    return [entry.key for entry in page.entries]


async def exists(gateway: RunningGateway, key: str) -> bool:
    services = gateway.runtime
    return await services.call(services.store.get, key) is not None


@pytest.mark.parametrize("locale", ["en", "zh"])
async def test_subagents_in_the_parent_conversation(
    web_gateway: RunningGateway, page: Page, artifacts: Path, locale: str
) -> None:
    text = STRINGS[locale]
    chat = WebChat(page, web_gateway, artifacts)
    await chat.open(locale, TOKEN)
    parent = await chat.new_chat()

    # Two slow children: the control shows the count and a spinner while they run.
    await chat.send(SLOW_CHILDREN)
    await expect(chat.toggle).to_have_text(text.dispatched(2))
    await expect(chat.toggle.locator("svg[data-icon=loader]")).to_be_visible()
    await expect(chat.status).to_have_text(text.status(busy=True))
    await expect(chat.toggle).to_have_attribute("aria-expanded", "false")
    await expect(chat.toggle).to_have_attribute("aria-label", text.toggle_label(2, expanded=False))
    status_id = await chat.status.get_attribute("id")
    await expect(chat.toggle).to_have_attribute("aria-describedby", status_id or "-")
    await expect(chat.status).to_have_attribute("aria-live", "polite")
    await expect(chat.by("chat-composer-working-indicator")).to_be_visible()
    toggle_box, plan_box = (
        await chat.toggle.bounding_box(),
        await chat.by("chat-composer-plan-toggle").bounding_box(),
    )
    assert toggle_box is not None
    assert plan_box is not None
    assert toggle_box["x"] + toggle_box["width"] <= plan_box["x"], "toggle left of the plan control"

    # The children exist in the gateway catalog but not in the sidebar.
    children = await children_in_catalog(web_gateway, parent)
    assert len(children) == 2
    await expect(chat.sidebar_row(parent)).to_be_visible()
    for child in children:
        await expect(chat.sidebar_row(child)).to_have_count(0)
    await chat.shot("1-children-running")

    # The panel opens above the toggle with one row per child.
    await chat.toggle.click()
    await expect(chat.panel).to_be_visible()
    await expect(chat.toggle).to_have_attribute("aria-expanded", "true")
    await expect(chat.toggle).to_have_attribute("aria-label", text.toggle_label(2, expanded=True))
    assert await chat.toggle.get_attribute("aria-controls") == await chat.panel.get_attribute("id")
    await expect(chat.rows).to_have_count(2)
    label = await chat.rows.first.get_attribute("aria-label")
    assert label is not None
    assert label.startswith(text.open)
    panel_box = await chat.panel.bounding_box()
    toggle_box = await chat.toggle.bounding_box()
    assert panel_box is not None
    assert toggle_box is not None
    assert panel_box["y"] + panel_box["height"] <= toggle_box["y"], "the panel opens above"

    # A third child appears without a reload; the open panel stays open.
    await chat.send(QUICK_CHILD)
    await expect(chat.toggle).to_have_text(text.dispatched(3))
    await expect(chat.rows).to_have_count(3)
    await expect(chat.panel).to_be_visible()
    await chat.shot("2-panel-open")

    # Everything settles: bot icon, "Settled".
    await expect(chat.status).to_have_text(text.status(busy=False), timeout=SETTLE_S)
    await expect(chat.toggle.locator("svg[data-icon=bot]")).to_be_visible()
    await expect(chat.by("acp-subagent-session-status").first).to_contain_text(text.settled)
    await chat.shot("3-settled")

    # A reload restores the same family, panel collapsed.
    await page.reload()
    await expect(chat.toggle).to_have_text(text.dispatched(3))
    await expect(chat.toggle).to_have_attribute("aria-expanded", "false")
    await expect(chat.panel).to_have_count(0)

    # A child conversation: marker, no input box, return action.
    await chat.toggle.click()
    opened = await chat.rows.first.get_attribute("data-session-key")
    assert opened is not None
    assert opened in await children_in_catalog(web_gateway, parent)
    await chat.rows.first.click()
    await expect(chat.by("chat-subagent-marker")).to_have_text(text.marker)
    await expect(chat.by("chat-composer-box")).to_have_count(0)
    await expect(chat.back).to_be_visible()
    await expect(chat.back).to_have_attribute("aria-label", text.back)
    assert await chat.selected_key() == opened
    assert "[Subagent Context]" not in await page.title()
    await chat.shot("4-child")

    # Returning switches to the parent; the panel of the earlier visit is closed.
    await chat.back.click()
    await expect(chat.by("chat-composer-box")).to_be_visible()
    assert await chat.selected_key() == parent
    await expect(chat.toggle).to_have_attribute("aria-expanded", "false")
    await expect(chat.panel).to_have_count(0)

    # Deleting the parent removes the return action and keeps the child.
    await chat.toggle.click()
    await chat.rows.first.click()
    await expect(chat.back).to_be_visible()
    await chat.sidebar_row(parent).get_by_test_id("session-delete").click()
    await chat.sidebar_row(parent).get_by_test_id("session-delete-confirm").click()
    await expect(chat.sidebar_row(parent)).to_have_count(0)
    await expect(chat.back).to_be_hidden()
    await expect(chat.by("chat-subagent-marker")).to_be_visible()
    assert await chat.selected_key() == opened
    assert not await exists(web_gateway, parent)
    assert await exists(web_gateway, opened)
    await chat.shot("5-parent-deleted")
