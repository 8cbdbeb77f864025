"""docs/gateway-methods.md names every part a gateway is built with, and the close bound."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from clawline.gateway.app import Gateway
from clawline.gateway.options import GatewaySettings

DOC = Path(__file__).resolve().parents[2] / "docs" / "gateway-methods.md"


def section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_every_part_of_a_gateway_is_in_the_table() -> None:
    parameters = inspect.signature(Gateway.__init__).parameters.values()
    keyword_only = {p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}
    rows = [
        line for line in section("How a gateway is built").splitlines() if line.startswith("| `")
    ]
    documented = {name for row in rows for name in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert keyword_only, "the Gateway takes its parts as keyword-only parameters"
    assert sorted(keyword_only - documented) == []
    assert sorted(documented - keyword_only) == []


def test_the_close_bound_is_documented_with_its_default() -> None:
    text = section("A connection and its tasks")
    default = GatewaySettings().close_timeout_s
    assert f"`close_timeout_s` (`GatewaySettings`, default {default:g} s)" in text
