# ruff: noqa: RUF001, RUF002  (Russian text, and the minus sign Intl may write)
"""Counts in Russian take the plural form their number needs (one, few, many: 1 субагент,
2 субагента, 5 субагентов), and relative times read as Russian ("… назад", "сейчас"), never
"-56 с" (docs/web.md, "Plurals and times"), in a real browser."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.async_api import Page, expect

from clawline.testing.live_gateway import RunningGateway
from tests.web.chat import WebChat
from tests.web.conftest import TOKEN
from tests.web.sizes import both_sizes

SETTLE_MS = 15_000
RUSSIAN_AGO = re.compile(r"^(сейчас|\d+ (секунд[уы]?|минут[уы]?) назад)$")


async def test_russian_counts_and_times(
    web_gateway: RunningGateway, page: Page, artifacts: Path
) -> None:
    chat = WebChat(page, web_gateway, artifacts)
    await chat.open("ru", TOKEN)
    parent = await chat.new_chat()
    row = chat.sidebar_row(parent)

    # One running child: "1 субагент" on the toggle and on the parent's row.
    await chat.send("spawn: sleep 2500\\nreply: один")
    await expect(chat.toggle).to_have_text("Запущен 1 субагент")
    await expect(row.get_by_role("img", name="1 субагент работает")).to_be_visible()
    await expect(row.get_by_test_id("session-subagents")).to_be_hidden(timeout=SETTLE_MS)

    # Two: "2 субагента".
    await chat.send("spawn: reply: два")
    await expect(chat.toggle).to_have_text("Запущено 2 субагента")

    # Five: three more at once, "5 субагентов"; while they run, "3 субагента работают".
    await chat.send("spawn 3 x: sleep 2500\\nreply: ещё")
    await expect(chat.toggle).to_have_text("Запущено 5 субагентов")
    await expect(chat.toggle).to_have_attribute(
        "aria-label", "Развернуть сеансы субагентов, Запущено 5 субагентов"
    )
    await expect(row.get_by_role("img", name="3 субагента работают")).to_be_visible()
    await both_sizes(chat, "1-five-subagents", drawer=True)

    # The plan control's label agrees with its count too.
    plan = chat.by("chat-composer-plan-toggle")
    await expect(plan).to_have_attribute("aria-label", "Показать 5 задач этого разговора")
    await expect(row.get_by_test_id("session-subagents")).to_be_hidden(timeout=SETTLE_MS)

    # Relative times: Russian words, no minus sign (the selected row is never unread).
    await expect(row).to_have_attribute("data-cue", "idle", timeout=SETTLE_MS)
    cue = row.locator(".session-cue-text")
    await expect(cue).to_have_text(RUSSIAN_AGO)
    text = await cue.text_content()
    assert text is not None
    assert not text.startswith(("-", "−")), text
