"""Fixtures for the web chat tests: a real gateway (token auth, offline model) and a headless
Chromium (Debian's ``/usr/bin/chromium``; Playwright never downloads a browser) driving it.

Screenshots go to ``$CLAWLINE_TEST_ARTIFACTS`` (default ``test-artifacts/``, git-ignored).
Every fixture stops what it started: the browser, the gateway and, with it, the gateway's ACP
bridge subprocess.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, async_playwright

from clawline.config import Settings
from clawline.gateway.methods.web import family_service
from clawline.gateway.options import GatewaySettings
from clawline.testing.live_gateway import RunningGateway, running_gateway

TOKEN = "web-test-token-0123456789"
CHROMIUM = "/usr/bin/chromium"  # Debian's; Playwright must never download a browser
ROOT = Path(__file__).resolve().parents[2]
CONFIG: dict[str, Any] = {"agents": {"defaults": {"subagents": {"maxSpawnDepth": 2}}}}
"""Children may spawn children of their own (the lineage tree test needs depth 2)."""


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> Path:
    """This test's screenshot directory."""
    base = Path(os.environ.get("CLAWLINE_TEST_ARTIFACTS", ROOT / "test-artifacts"))
    node_name: str = request.node.name
    name = node_name.replace("[", "-").replace("]", "").replace("/", "-")
    path = base / "web" / name
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def gateway_config() -> dict[str, Any]:
    """config.toml of the test gateway; a module overrides it to enable more."""
    return CONFIG


@pytest.fixture
async def web_gateway(
    tmp_path: Path, gateway_config: dict[str, Any]
) -> AsyncIterator[RunningGateway]:
    state = tmp_path / "state"
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    config = Settings(state_dir=state, raw=gateway_config)
    async with running_gateway(state, gateway_settings=settings, settings=config) as running:
        yield running
        bridge = family_service(running.gateway).processes
    for process in bridge:
        assert process.returncode is not None, "the ACP bridge outlived its gateway"


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    """A page that must log no error. Tests list ``web_gateway`` before ``page``, so the page is
    closed before its gateway stops (else its reconnect attempts would be logged as errors)."""
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    opened = await context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on(
        "console",
        lambda message: errors.append(message.text) if message.type == "error" else None,
    )
    try:
        yield opened
    finally:
        await context.close()
    assert errors == [], f"errors in the page (uncaught, CSP violations, failed loads): {errors}"


@contextlib.asynccontextmanager
async def modules_page(state: Path, script: str) -> AsyncIterator[Page]:
    """A page of a fresh gateway's web chat on which ``script`` loaded the modules under test
    into ``window.mods`` (it returns how many names it loaded: more than 10)."""
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    async with (
        running_gateway(state, gateway_settings=settings) as gateway,
        async_playwright() as playwright,
    ):
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = await browser.new_page()
            await page.goto(gateway.http_url + "/")
            assert await page.evaluate(script) > 10
            yield page
        finally:
            await browser.close()
