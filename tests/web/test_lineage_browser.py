"""The details pane (lineage tree of the whole family with live status, the session's tasks),
the plan control, and a running child's status-only composer, in a real browser."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect

from clawline.testing.live_gateway import RunningGateway
from tests.web.chat import WebChat
from tests.web.conftest import TOKEN

# The child spawns a grandchild that works for 3 s, then answers "leaf".
NESTED = "spawn: spawn: sleep 3000\\nreply: leaf"
SETTLE_MS = 15_000


async def test_family_tree_tasks_and_a_running_child(
    web_gateway: RunningGateway, page: Page, artifacts: Path
) -> None:
    chat = WebChat(page, web_gateway, artifacts)
    await page.emulate_media(reduced_motion="reduce")
    await chat.open("en", TOKEN)
    parent = await chat.new_chat()
    await chat.send(NESTED)
    await expect(chat.toggle).to_have_text("Dispatched 1 subagent")  # plural form "one"

    # The keyboard opens and closes the panel.
    await chat.toggle.focus()
    await page.keyboard.press("Enter")
    await expect(chat.panel).to_be_visible()
    await page.keyboard.press("Escape")
    await expect(chat.panel).to_have_count(0)
    await expect(chat.toggle).to_be_focused()

    # The tree: parent → child → grandchild, every depth, the grandchild running.
    await chat.by("chat-details-toggle").click()
    await expect(chat.by("chat-details-toggle")).to_have_attribute("aria-expanded", "true")
    tree = chat.by("lineage-tree")
    nodes = tree.get_by_test_id("lineage-node")
    await expect(nodes).to_have_count(3)
    root = tree.locator(f'[data-session-key="{parent}"]')
    child = root.locator(":scope > ul > li")
    grandchild = child.locator(":scope > ul > li")
    await expect(child).to_have_count(1)
    await expect(grandchild).to_have_count(1)
    await expect(grandchild).to_have_attribute("data-status", "running")
    # Reduced motion: the spinner shows but does not spin.
    spinner = grandchild.locator(":scope > button svg[data-icon=loader]")
    await expect(spinner).to_be_visible()
    assert await spinner.evaluate("(el) => getComputedStyle(el).animationName") == "none"
    await expect(root.locator(":scope > button")).to_have_attribute("aria-current", "true")
    await chat.shot("1-tree-running")

    # Opening the running grandchild: marker, status-only composer "Thinking…", no input box.
    grandchild_key = await grandchild.get_attribute("data-session-key")
    child_key = await child.get_attribute("data-session-key")
    await grandchild.locator(":scope > button").click()
    await expect(chat.by("chat-subagent-marker")).to_be_visible()
    await expect(chat.by("chat-composer-box")).to_have_count(0)
    indicator = chat.by("chat-composer-working-indicator")
    await expect(indicator).to_contain_text("Thinking…")
    await expect(indicator).to_have_attribute("role", "status")
    await expect(chat.back).to_be_visible()
    await expect(chat.by("details-tasks").get_by_test_id("task-row")).to_have_count(1)
    await chat.shot("2-grandchild-running")

    # It settles: the status-only composer goes, the tree shows it done, live.
    await expect(grandchild).to_have_attribute("data-status", "done", timeout=SETTLE_MS)
    await expect(indicator).to_be_hidden()
    await expect(chat.by("chat-composer")).to_be_hidden()

    # The return action goes to the direct parent (the child), not the root.
    await chat.back.click()
    assert await chat.selected_key() == child_key
    assert grandchild_key != child_key

    # In the root: the plan control lists the tasks; one composer panel at a time.
    await root.locator(":scope > button").click()
    assert await chat.selected_key() == parent
    plan = chat.by("chat-composer-plan-toggle")
    await expect(plan).to_have_text("Tasks: 1")
    await chat.toggle.click()
    await expect(chat.panel).to_be_visible()
    await plan.click()
    await expect(plan).to_have_attribute("aria-expanded", "true")
    await expect(chat.panel).to_have_count(0)
    await expect(chat.toggle).to_have_attribute("aria-expanded", "false")
    plan_panel = chat.by("chat-composer-plan-panel")
    await expect(plan_panel.get_by_test_id("task-row")).to_have_count(1)
    await expect(plan_panel.get_by_test_id("task-row")).to_have_attribute(
        "data-status", "succeeded", timeout=SETTLE_MS
    )
    await plan.press("Escape")
    await expect(plan_panel).to_have_count(0)
    await chat.shot("3-settled-tree-and-tasks")
