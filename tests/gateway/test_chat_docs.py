"""docs/gateway-chat.md names every parameter the chat and agent methods accept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clawline.gateway.methods import agent, chat
from clawline.gateway.params import Schema

DOC = Path(__file__).resolve().parents[2] / "docs" / "gateway-chat.md"


def section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"### `{title}`")
    end = text.find("\n### ", start + 1)
    return text[start : end if end != -1 else None]


@pytest.mark.parametrize(
    ("method", "schema"),
    [
        ("chat.send", chat.SEND),
        ("chat.history", chat.HISTORY),
        ("chat.abort", chat.ABORT),
        ("chat.inject", chat.INJECT),
        ("agent", agent.AGENT),
        ("agent.wait", agent.WAIT),
    ],
)
def test_every_param_is_documented(method: str, schema: Schema) -> None:
    documented = set(re.findall(r"`([A-Za-z]+)", section(method))) | set(
        re.findall(r"[{,]\s*([A-Za-z]+)\??", section(method))
    )
    missing = sorted(set(schema) - documented)
    assert missing == [], f"{method}: undocumented params {missing}"


def test_every_method_served_is_documented() -> None:
    for registry in (chat.methods, agent.methods):
        for name in registry.names():
            assert f"### `{name}`" in DOC.read_text(encoding="utf-8")
