"""With the XWorkmate plugin enabled, the details pane lists the artifacts of the session's task
runs (``xworkmate.artifacts.list``); without it, only tasks (the other tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from clawline.testing.live_gateway import RunningGateway
from tests.web.chat import WebChat
from tests.web.conftest import CONFIG, TOKEN


@pytest.fixture
def gateway_config() -> dict[str, Any]:
    return {**CONFIG, "plugins": {"enabled": ["clawline.xworkmate"]}}


async def test_artifacts_of_the_task_runs(
    web_gateway: RunningGateway, page: Page, artifacts: Path
) -> None:
    chat = WebChat(page, web_gateway, artifacts)
    await chat.open("en", TOKEN)
    await chat.new_chat()
    await chat.send("spawn: write reports/summary.md: all good\\nreply: wrote it")
    await chat.by("chat-details-toggle").click()
    tasks = chat.by("details-tasks")
    await expect(tasks.get_by_test_id("task-row")).to_have_attribute("data-status", "succeeded")
    listed = tasks.get_by_test_id("artifact-list")
    await expect(listed).to_have_text("reports/summary.md")
    await chat.shot("artifacts")
