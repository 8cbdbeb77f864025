"""One title per session everywhere (docs/web.md, "Titles"), and the busy cue of a parent
whose sub-agents run, in a real browser.

A parent spawns two children with the same task and a labelled one. Its sidebar title is its
message's first line (no literal ``\\n``); while the children run its row carries "3 subagents
running". The twins get their short ids, so no two rows of the panel read the same; the
labelled child is its label. Each child has one title in the panel, the lineage tree and — once
opened — the header and the window title.
"""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect

from clawline.testing.live_gateway import RunningGateway
from tests.web.chat import WebChat
from tests.web.conftest import TOKEN
from tests.web.sizes import both_sizes

FAMILY = "spawn 2 x: sleep 2500\\nreply: twin\nspawn alpha: sleep 2500\\nreply: labelled"
SETTLE_MS = 15_000


async def test_one_title_everywhere_and_the_busy_cue(
    web_gateway: RunningGateway, page: Page, artifacts: Path
) -> None:
    chat = WebChat(page, web_gateway, artifacts)
    await chat.open("en", TOKEN)
    parent = await chat.new_chat()
    await chat.send(FAMILY)
    row = chat.sidebar_row(parent)

    # The parent's title is the first line of its message; its row shows its running children.
    await expect(row.locator(".session-title")).to_have_text("spawn 2 x: sleep 2500")
    await expect(chat.by("chat-title")).to_have_text("spawn 2 x: sleep 2500")
    cue = row.get_by_role("img", name="3 subagents running")
    await expect(cue).to_be_visible()
    await expect(cue.locator("svg[data-icon=loader]")).to_be_visible()
    await expect(row.get_by_test_id("session-subagents")).to_have_attribute(
        "title", "3 subagents running"
    )
    await both_sizes(chat, "1-busy-cue", drawer=True)

    # The panel: three rows, three different titles; the twins differ by their short ids.
    await expect(chat.toggle).to_have_text("Dispatched 3 subagents")
    await chat.toggle.click()
    await expect(chat.rows).to_have_count(3)
    panel: dict[str, str] = {}
    for index in range(3):
        key = await chat.rows.nth(index).get_attribute("data-session-key")
        text = await chat.rows.nth(index).locator(".subagent-row-title").text_content()
        assert key is not None
        assert text is not None
        panel[key] = text
    assert len(set(panel.values())) == 3, panel
    for key, title in panel.items():
        assert "\\n" not in title
        assert "[Subagent Context]" not in title
        if title != "alpha":
            assert title == f"sleep 2500 · {key.split(':')[-1][:8]}"
    assert sorted(panel.values())[0] == "alpha"
    await expect(chat.rows.filter(has_text="alpha")).to_have_attribute(
        "aria-label", "Open subagent alpha"
    )
    await both_sizes(chat, "2-distinct-siblings")

    # The lineage tree names each child as the panel does.
    await chat.by("chat-details-toggle").click()
    tree = chat.by("lineage-tree")
    for key, title in panel.items():
        await expect(tree.locator(f'[data-session-key="{key}"] .tree-label')).to_have_text(title)

    # Opened, a child has the same title in the header, the window title and the tree.
    twin = next(key for key, title in panel.items() if title != "alpha")
    await tree.locator(f'[data-session-key="{twin}"] > button').click()
    assert await chat.selected_key() == twin
    await expect(chat.by("chat-title")).to_have_text(panel[twin])
    await expect(page).to_have_title(f"{panel[twin]} · clawline")
    await expect(tree.locator(f'[data-session-key="{twin}"] .tree-label')).to_have_text(panel[twin])
    await both_sizes(chat, "3-child-title")

    # Once the children are done the cue goes; the titles stay.
    await expect(row.get_by_test_id("session-subagents")).to_be_hidden(timeout=SETTLE_MS)
    await expect(row).to_have_attribute("data-subagents-busy", "0")
    await expect(chat.by("chat-title")).to_have_text(panel[twin])
