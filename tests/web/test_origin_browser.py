"""Origin and Host checks seen from Debian's Chromium: a foreign page (served by a second local
HTTP server and opened as ``http://evil.test:<port>/``) can neither open the gateway's WebSocket
nor call a method; a DNS-rebinding name for the gateway (``http://rebind.test:<gw port>/``) gets
403 instead of the chat; the gateway's own page still connects.

Both names resolve to 127.0.0.1 inside the browser only (``--host-resolver-rules``), so the
foreign page is on loopback like the gateway and the browser has no reason of its own to refuse.
The proof that the gateway refuses is that the same page connects to a second gateway that lists
its origin in ``allowedOrigins``, and that the refusing gateway logs the page's origin.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from playwright.async_api import Browser, Page, async_playwright, expect

from clawline.config import Settings
from clawline.gateway.options import GatewaySettings, resolve_gateway_settings
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.web.chat import WebChat
from tests.web.conftest import CHROMIUM, TOKEN

FOREIGN = "evil.test"
REBIND = "rebind.test"
RESOLVER_RULES = f"--host-resolver-rules=MAP {FOREIGN} 127.0.0.1, MAP {REBIND} 127.0.0.1"

PROBE_PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>a foreign page</title></head>
<body><p>nothing to see</p><script src="/probe.js"></script></body></html>
"""

PROBE_SCRIPT = b"""
// Dial the gateway named in ?gw=, complete the handshake as an admin operator, list sessions.
const gateway = new URLSearchParams(location.search).get("gw");
window.outcome = new Promise((resolve) => {
  const seen = {
    opened: false, challenged: false, connected: false, listed: false, closeCode: null,
  };
  const socket = new WebSocket(gateway);
  socket.onopen = () => { seen.opened = true; };
  socket.onmessage = (message) => {
    const frame = JSON.parse(message.data);
    if (frame.type === "event" && frame.event === "connect.challenge") {
      seen.challenged = true;
      socket.send(JSON.stringify({ type: "req", id: "c", method: "connect", params: {
        minProtocol: 3, maxProtocol: 4, role: "operator", scopes: ["operator.admin"], caps: [],
        client: { id: "probe", version: "0.0.1", platform: "web", mode: "webchat" },
      } }));
    } else if (frame.type === "res" && frame.id === "c") {
      seen.connected = frame.ok === true;
      socket.send(JSON.stringify({ type: "req", id: "l", method: "sessions.list", params: {} }));
    } else if (frame.type === "res" && frame.id === "l") {
      seen.listed = frame.ok === true && Array.isArray(frame.payload.sessions);
      socket.close(1000);
    }
  };
  socket.onclose = (event) => { seen.closeCode = event.code; resolve(seen); };
});
"""


class _ForeignSite(http.server.BaseHTTPRequestHandler):
    files: ClassVar[dict[str, tuple[str, bytes]]] = {
        "/": ("text/html; charset=utf-8", PROBE_PAGE),
        "/probe.js": ("text/javascript", PROBE_SCRIPT),
    }

    def do_GET(self) -> None:
        found = self.files.get(self.path.split("?", 1)[0])
        if found is None:
            self.send_error(404)
            return
        content_type, body = found
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean


@pytest.fixture
def foreign_site() -> Iterator[int]:
    """A second local HTTP server (127.0.0.1:0) serving the probe page; yields its port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ForeignSite)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    assert not thread.is_alive()


@pytest.fixture
async def mapped_browser() -> AsyncIterator[Browser]:
    """Chromium resolving ``evil.test`` and ``rebind.test`` to 127.0.0.1."""
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=[RESOLVER_RULES]
        )
        try:
            yield launched
        finally:
            await launched.close()


@contextlib.asynccontextmanager
async def opened_page(browser: Browser) -> AsyncIterator[tuple[Page, list[str]]]:
    """A fresh page and the console messages it logs."""
    context = await browser.new_context()
    page = await context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    try:
        yield page, console
    finally:
        await context.close()


async def probe(browser: Browser, page_url: str, gateway: RunningGateway) -> dict[str, Any]:
    """Open the foreign page against ``gateway``; what its script managed to do."""
    async with opened_page(browser) as (page, _):
        await page.goto(f"{page_url}?gw={gateway.url}/")
        outcome: dict[str, Any] = await asyncio.wait_for(page.evaluate("window.outcome"), 15)
    return outcome


def origin_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        record.getMessage()
        for record in caplog.records
        if record.name == "clawline.gateway.origin" and record.levelno == logging.WARNING
    ]


async def test_a_foreign_page_cannot_drive_the_gateway(
    tmp_path: Path,
    foreign_site: int,
    mapped_browser: Browser,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="clawline.gateway.origin")
    foreign_origin = f"http://{FOREIGN}:{foreign_site}"
    page_url = foreign_origin + "/"
    # the default set-up the probe attacked: loopback, no auth, every connection is admin
    async with running_gateway(
        tmp_path / "default", gateway_settings=GatewaySettings(port=0)
    ) as gw:
        async with opened_page(mapped_browser) as (page, console):
            await page.goto(f"{page_url}?gw={gw.url}/")
            refused = await asyncio.wait_for(page.evaluate("window.outcome"), 15)
            await expect(page.locator("p")).to_have_text("nothing to see")
        assert refused == {
            "opened": False,
            "challenged": False,
            "connected": False,
            "listed": False,
            "closeCode": 1006,
        }
        # the browser saw the gateway's answer: a 403 to the upgrade
        assert any("403" in line for line in console), console
        warnings = origin_warnings(caplog)
        assert len(warnings) == 1, warnings
        assert repr(foreign_origin) in warnings[0]
        assert "allowedOrigins" in warnings[0]

    # the same page, the same browser: a gateway that lists the page's origin lets it in
    raw: dict[str, Any] = {"gateway": {"port": 0, "allowedOrigins": [foreign_origin]}}
    settings = Settings(state_dir=tmp_path / "listed", raw=raw)
    chosen = resolve_gateway_settings(settings, env={})
    async with running_gateway(tmp_path / "listed", gateway_settings=chosen) as listed:
        allowed = await probe(mapped_browser, page_url, listed)
    assert allowed == {
        "opened": True,
        "challenged": True,
        "connected": True,
        "listed": True,
        "closeCode": 1000,
    }


async def test_a_rebinding_name_gets_403_instead_of_the_chat(
    web_gateway: RunningGateway, mapped_browser: Browser, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="clawline.gateway.origin")
    rebound = f"{REBIND}:{web_gateway.port}"
    async with opened_page(mapped_browser) as (page, _):
        response = await page.goto(f"http://{rebound}/")
        assert response is not None
        assert response.status == 403
        assert (await response.text()) == "host not allowed\n"
        assert await page.get_by_test_id("login-token").count() == 0
        assert await page.locator("script").count() == 0
    warnings = origin_warnings(caplog)
    assert len(warnings) == 1, warnings
    assert repr(rebound) in warnings[0]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_the_gateways_own_page_still_connects(
    web_gateway: RunningGateway,
    mapped_browser: Browser,
    artifacts: Path,
    host: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="clawline.gateway.origin")
    async with opened_page(mapped_browser) as (page, console):
        own = RunningGateway(
            url=f"ws://{host}:{web_gateway.port}",
            gateway=web_gateway.gateway,
            runtime=web_gateway.runtime,
        )
        chat = WebChat(page, own, artifacts)
        await chat.open("en", TOKEN)
        await expect(chat.by("connection-status")).to_have_text("Connected")
        errors = [line for line in console if line.startswith("error:")]
        assert errors == [], errors
    assert origin_warnings(caplog) == []
