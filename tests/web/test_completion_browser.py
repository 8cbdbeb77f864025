"""A parent's completion cards, its task in the child's conversation, and the child once the
parent is gone (docs/web.md, "Completion cards", "Orphaned subagents"), in a real browser.

One scenario: a parent spawns a child that succeeds and one that fails. The parent's timeline
shows a card per completion (the child's title as a link, status, result, duration) and no
internal event text; the link opens the child, whose first message is the parent's task,
labelled as coming from the parent, never "You". The parent is then deleted over the gateway:
the child leaves nothing unreachable — it is listed under "Orphaned subagents" and opens from
there.
"""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect

from clawline.testing.live_gateway import RunningGateway
from tests.gateway.wire import WireClient
from tests.web.chat import WebChat
from tests.web.conftest import TOKEN
from tests.web.sizes import both_sizes

# The first child sleeps past one second (its card says "Ran for 1 sec"), the second fails.
TWO_CHILDREN = "spawn: sleep 1100\\nreply: all done\nspawn: fail: broken on purpose"
SETTLE_MS = 15_000


async def test_completion_cards_the_parents_task_and_an_orphan(
    web_gateway: RunningGateway, page: Page, artifacts: Path
) -> None:
    chat = WebChat(page, web_gateway, artifacts)
    await chat.open("en", TOKEN)
    parent = await chat.new_chat()
    await chat.send(TWO_CHILDREN)

    # One card per completion, the ok one and the failed one; no internal text anywhere.
    cards = chat.by("completion-card")
    await expect(cards).to_have_count(2, timeout=SETTLE_MS)
    done = page.locator('[data-testid="completion-card"][data-status="ok"]')
    failed = page.locator('[data-testid="completion-card"][data-status="error"]')
    await expect(done.get_by_test_id("completion-title")).to_have_text("sleep 1100")
    await expect(done).to_contain_text("Subagent finished")
    await expect(done.get_by_test_id("completion-status")).to_have_text("Completed")
    await expect(done.get_by_test_id("completion-result")).to_have_text("all done")
    await expect(done.get_by_test_id("completion-duration")).to_have_text("Ran for 1 sec")
    await expect(failed.get_by_test_id("completion-title")).to_have_text("fail: broken on purpose")
    await expect(failed.get_by_test_id("completion-status")).to_have_text(
        "Failed: broken on purpose"
    )
    await expect(failed.get_by_test_id("completion-result")).to_have_text("No output")
    timeline = chat.by("chat-timeline")
    await expect(timeline).not_to_contain_text("OPENCLAW_INTERNAL_CONTEXT")
    await expect(timeline).not_to_contain_text("Internal task completion event")
    await expect(chat.by("message-internal")).to_have_count(0)
    await both_sizes(chat, "1-completion-cards")

    # The title is a link that opens the child.
    link = done.get_by_role("button", name="Open subagent sleep 1100")
    child = await done.get_attribute("data-child-key")
    assert child is not None
    assert child.startswith("agent:main:subagent:")
    await link.click()
    assert await chat.selected_key() == child
    await expect(chat.by("chat-title")).to_have_text("sleep 1100")

    # The child's first message is the parent's task: from the parent, with a Task badge.
    task = chat.by("message-task")
    await expect(task).to_have_count(1)
    await expect(task.get_by_test_id("message-task-from")).to_have_text("From spawn: sleep 1100")
    await expect(task.get_by_test_id("message-task-badge")).to_have_text("Task")
    await expect(task.locator(".message-body")).to_have_text("sleep 1100\nreply: all done")
    await expect(chat.by("message-user")).to_have_count(0)
    await expect(timeline).not_to_contain_text("You")
    await expect(chat.by("chat-subagent-marker")).to_be_visible()
    await both_sizes(chat, "2-child-task")

    # Deleted over the gateway, the parent leaves its children in "Orphaned subagents".
    orphans = chat.by("orphan-group")
    await expect(orphans).to_be_hidden()
    operator = await WireClient.open(web_gateway.url)
    try:
        assert (await operator.connect(token=TOKEN))["ok"] is True
        assert (await operator.call("sessions.delete", {"key": parent}))["ok"] is True
    finally:
        await operator.close()
    await expect(chat.sidebar_row(parent)).to_have_count(0)
    await expect(orphans).to_be_visible()
    await expect(orphans).to_contain_text("Orphaned subagents")
    rows = orphans.get_by_test_id("session-row")
    await expect(rows).to_have_count(2)
    await expect(orphans.locator(f'[data-session-key="{child}"] .session-title')).to_have_text(
        "sleep 1100"
    )
    # Its task now comes from a parent that is gone.
    await expect(task.get_by_test_id("message-task-from")).to_have_text("From the parent agent")
    await both_sizes(chat, "3-orphaned-subagents", drawer=True)

    # The other orphan opens from the group: a child view without a way back.
    other = orphans.locator(f'[data-testid="session-row"]:not([data-session-key="{child}"])')
    await other.get_by_role("button").first.click()
    await expect(chat.by("chat-title")).to_have_text("fail: broken on purpose")
    assert await chat.selected_key() != child
    await expect(chat.by("chat-subagent-marker")).to_be_visible()
    await expect(chat.back).to_be_hidden()
    await expect(other).to_have_attribute("data-cue", "idle")
