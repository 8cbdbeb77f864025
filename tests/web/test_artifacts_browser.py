"""With the XWorkmate plugin enabled, the details pane lists the artifacts of the session's task
runs (``xworkmate.artifacts.list``) with their sizes, opens a text artifact in the page and
downloads any artifact (``xworkmate.artifacts.read``, over the WebSocket, saved from a Blob);
a file above the plugin's ``maxInlineBytes`` is refused in words. Without the plugin, only tasks
(the other tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from clawline.testing.live_gateway import RunningGateway
from tests.web.chat import WebChat
from tests.web.conftest import CONFIG, TOKEN
from tests.web.sizes import both_sizes

INLINE_LIMIT = 64
BIG = "x" * 100  # above INLINE_LIMIT: described, never inlined
WRITES = (
    f"spawn: write reports/summary.md: all good\\nwrite reports/big.txt: {BIG}\\nreply: wrote it"
)


@pytest.fixture
def gateway_config() -> dict[str, Any]:
    return {
        **CONFIG,
        "plugins": {
            "enabled": ["clawline.xworkmate"],
            "xworkmate": {"maxInlineBytes": INLINE_LIMIT},
        },
    }


async def test_artifacts_of_the_task_runs(
    web_gateway: RunningGateway, page: Page, artifacts: Path
) -> None:
    chat = WebChat(page, web_gateway, artifacts)
    await chat.open("en", TOKEN)
    await chat.new_chat()
    await chat.send(WRITES)
    await chat.by("chat-details-toggle").click()
    tasks = chat.by("details-tasks")
    await expect(tasks.get_by_test_id("task-row")).to_have_attribute("data-status", "succeeded")
    listed = tasks.get_by_test_id("artifact-list")
    await expect(listed.get_by_test_id("artifact-name")).to_have_text(
        ["reports/big.txt", "reports/summary.md"]
    )
    summary = listed.locator('[data-path="reports/summary.md"]')
    big = listed.locator('[data-path="reports/big.txt"]')
    await expect(summary.get_by_test_id("artifact-size")).to_have_text("8 B")
    await expect(big.get_by_test_id("artifact-size")).to_have_text("100 B")

    # Open: the text in the page, as text; Escape closes it and focus goes back.
    open_button = summary.get_by_role("button", name="Open reports/summary.md")
    await open_button.click()
    preview = tasks.get_by_test_id("artifact-preview")
    await expect(preview).to_be_visible()
    await expect(preview.get_by_role("heading")).to_have_text("Preview of reports/summary.md")
    await expect(preview.get_by_test_id("artifact-preview-text")).to_have_text("all good")
    await both_sizes(chat, "artifact-open")
    await preview.get_by_test_id("artifact-preview-text").press("Escape")
    await expect(preview).to_be_hidden()
    await expect(chat.by("details-pane")).to_be_visible()
    await expect(open_button).to_be_focused()

    # Download: a file of the artifact's name and bytes.
    async with page.expect_download() as started:
        await summary.get_by_role("button", name="Download reports/summary.md (8 B)").click()
    download = await started.value
    assert download.suggested_filename == "summary.md"
    saved = await download.path()
    assert saved.read_bytes() == b"all good"
    await expect(tasks.get_by_test_id("artifact-status")).to_be_hidden()

    # Above maxInlineBytes the gateway describes the file without its content: said in words.
    await big.get_by_role("button", name="Download reports/big.txt (100 B)").click()
    await expect(tasks.get_by_test_id("artifact-status")).to_have_text(
        "reports/big.txt (100 B) is too large to open here."
    )
    await chat.shot("artifacts")
