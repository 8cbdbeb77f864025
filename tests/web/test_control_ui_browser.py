"""Acceptance: OpenClaw's own Control UI (``openclaw@2026.9.6``, docs/control-ui.md) drives a
clawline gateway in Debian's Chromium.

The UI's static files come from the npm package (``npm pack``, cached in
``$CLAWLINE_TEST_CACHE``, default ``~/.cache/clawline-tests/``; only ``package/dist/control-ui/``
is extracted) and are served from Python on ``127.0.0.1:0`` — no Node runtime serves them. The
gateway (token auth, the offline model) lists the UI's origin in ``[gateway] allowedOrigins``.

One scenario: the link ``?gatewayUrl=…#token=…`` asks to switch gateways and the switch logs in;
the sidebar lists the sessions; opening a session shows its history; a message from the
composer gets the agent's streamed reply; a parent's two running subagents show above its
composer (from the ``task`` events of its session, as OpenClaw's gateway sends them) and never as
sidebar rows; the Home, Agents, Systems and Plugins pages show no error banner and no "unknown
method". Every method the UI called and every event it
received must be listed in docs/control-ui.md's tables, and no method the tables call served
may be refused.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import shutil
import subprocess
import tarfile
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
from playwright.async_api import Browser, Page, WebSocket, expect

from clawline.client.connection import GatewayClient
from clawline.config import Settings
from clawline.gateway.options import resolve_gateway_settings
from clawline.store.base import SessionQuery
from clawline.testing import eventually
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.web.conftest import ROOT, TOKEN

OPENCLAW = "openclaw@2026.9.6"
TARBALL = "openclaw-2026.9.6.tgz"
UI_PREFIX = "package/dist/control-ui/"
DOC = ROOT / "docs" / "control-ui.md"
NOTES = "agent:main:notes"
OTHER = "agent:main:other"
SLOW_CHILDREN = "spawn 2 x: sleep 4000\\nreply: done"
TIMEOUT_MS = 10_000
ERROR_BANNERS = ".callout.danger:visible, .oc-banner.danger:visible, [role=alert]:visible"

# What the static server cannot give the UI, which OpenClaw's gateway serves beside it: its
# runtime configuration and workspace icons (404s), and the UI's first dial of its own origin
# before the link's gateway is confirmed (the static server answers 200, not an upgrade).
EXPECTED_CONSOLE = (
    re.compile(r"^Failed to load resource: the server responded with a status of 404"),
    re.compile(r"^WebSocket connection to 'ws://127\.0\.0\.1:\d+/' failed: .* code: 200$"),
)
EXPECTED_404 = (re.compile(r"^/control-ui-config\.json$"), re.compile(r"^/__openclaw__/"))


# --- the UI's files ------------------------------------------------------------------------


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "clawline-tests"
    path = Path(os.environ.get("CLAWLINE_TEST_CACHE") or default)
    path.mkdir(parents=True, exist_ok=True)
    return path


def fetch_tarball(cache: Path) -> Path:
    """The package tarball, fetched once with ``npm pack`` (the npm registry only)."""
    tarball = cache / TARBALL
    if tarball.is_file():
        return tarball
    npm = shutil.which("npm")
    assert npm is not None, "npm is needed to fetch OpenClaw's Control UI (apt-get install npm)"
    subprocess.run(
        [npm, "pack", OPENCLAW, "--pack-destination", str(cache), "--silent"],
        check=True,
        timeout=300,
        stdout=subprocess.DEVNULL,
    )
    assert tarball.is_file(), f"npm pack did not write {tarball}"
    return tarball


def extract_control_ui(tarball: Path, into: Path) -> Path:
    """Only ``package/dist/control-ui/``, once; a marker file says the extraction finished."""
    root = into / "package" / "dist" / "control-ui"
    done = into / ".complete"
    if done.is_file():
        return root
    shutil.rmtree(into, ignore_errors=True)
    with tarfile.open(tarball, "r:gz") as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(UI_PREFIX)]
        archive.extractall(into, members=members, filter="data")
    assert (root / "index.html").is_file(), f"{TARBALL} has no {UI_PREFIX}index.html"
    done.touch()
    return root


@pytest.fixture(scope="session")
def control_ui() -> Path:
    cache = cache_dir()
    return extract_control_ui(fetch_tarball(cache), cache / "openclaw-2026.9.6-control-ui")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def ui_origin(control_ui: Path) -> Iterator[str]:
    """The UI's files on 127.0.0.1:0; yields the origin."""
    handler = functools.partial(_Quiet, directory=str(control_ui))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    assert not thread.is_alive()


@pytest.fixture
async def gateway(tmp_path: Path, ui_origin: str) -> AsyncIterator[RunningGateway]:
    raw: dict[str, Any] = {
        "gateway": {"port": 0, "auth": "token", "token": TOKEN, "allowedOrigins": [ui_origin]},
        "agents": {"defaults": {"model": "offline"}},
    }
    state = tmp_path / "state"
    settings = Settings(state_dir=state, raw=raw)
    chosen = resolve_gateway_settings(settings, env={})
    async with running_gateway(state, gateway_settings=chosen, settings=settings) as running:
        yield running


# --- the compatibility table ---------------------------------------------------------------

_ROW = re.compile(r"^\| `([^`]+)` \| ([^|]+?) \|")


def compatibility_table(heading: str, text: str | None = None) -> dict[str, str]:
    """``name → status`` from the table under ``## <heading>`` of docs/control-ui.md."""
    lines = (DOC.read_text() if text is None else text).splitlines()
    start = lines.index(f"## {heading}")
    rows: dict[str, str] = {}
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        found = _ROW.match(line)
        if found:
            rows[found.group(1)] = found.group(2).strip()
    return rows


def test_the_table_parser_reads_both_tables() -> None:
    methods = compatibility_table("Methods")
    events = compatibility_table("Events")
    assert methods["chat.send"] == "served"
    assert methods["cron.list"] == "served empty"
    assert methods["config.get"] == "not served"
    assert events["chat"] == "served"
    assert events["presence"] == "not sent"
    assert "chat" not in methods
    sample = "## Methods\n\n| method | clawline |\n|---|---|\n| `a.b` | served |  |\n## Next\n"
    assert compatibility_table("Methods", sample) == {"a.b": "served"}


# --- recording the UI's frames -------------------------------------------------------------


@dataclass
class Wire:
    """The gateway frames of one page: methods called (with their answers) and events."""

    gateway_url: str
    requests: dict[str, tuple[str, Any]] = field(default_factory=dict)
    answers: dict[str, list[tuple[bool, str]]] = field(default_factory=dict)
    events: list[tuple[str, Any]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)

    def attach(self, socket: WebSocket) -> None:
        if not socket.url.startswith(self.gateway_url):
            return  # the UI's dial of its own origin, before the switch
        socket.on("framesent", self._sent)
        socket.on("framereceived", self._received)

    def _sent(self, payload: str | bytes) -> None:
        frame = orjson.loads(payload)
        if frame.get("type") == "req":
            self.requests[frame["id"]] = (frame["method"], frame.get("params"))

    def _received(self, payload: str | bytes) -> None:
        frame = orjson.loads(payload)
        if frame.get("type") == "event":
            self.events.append((frame["event"], frame.get("payload")))
        elif frame.get("type") == "res" and frame.get("id") in self.requests:
            method, params = self.requests[frame["id"]]
            error = "" if frame["ok"] else str(frame["error"]["message"])
            if error:
                self.refusals.append(f"{method} {orjson.dumps(params).decode()}: {error}")
            self.answers.setdefault(method, []).append((bool(frame["ok"]), error))

    @property
    def methods(self) -> set[str]:
        return {method for method, _ in self.requests.values()}

    @property
    def event_names(self) -> set[str]:
        return {name for name, _ in self.events}

    def chat_states(self, key: str) -> list[str]:
        return [
            str(payload.get("state"))
            for name, payload in self.events
            if name == "chat" and isinstance(payload, dict) and payload.get("sessionKey") == key
        ]

    def summary(self) -> str:
        lines = []
        for method in sorted(self.answers):
            outcomes = self.answers[method]
            refused = sorted({error for ok, error in outcomes if not ok})
            lines.append(
                f"{method}: {sum(ok for ok, _ in outcomes)} ok"
                + "".join(f"; refused: {error}" for error in refused)
            )
        return "\n".join([*lines, "", "refused requests:", *self.refusals])


@contextlib.asynccontextmanager
async def ui_page(browser: Browser, wire: Wire) -> AsyncIterator[tuple[Page, list[str]]]:
    """A page whose gateway frames go to ``wire``; yields it with the problems it logged."""
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    page = await context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))

    def console(message: Any) -> None:
        text = str(message.text)
        if message.type == "error" and not any(p.search(text) for p in EXPECTED_CONSOLE):
            problems.append(f"console: {text}")

    def response(answer: Any) -> None:
        path = "/" + str(answer.url).split("/", 3)[-1].split("?", 1)[0]
        if answer.status >= 400 and not any(p.search(path) for p in EXPECTED_404):
            problems.append(f"HTTP {answer.status} {answer.url}")

    page.on("console", console)
    page.on("response", response)
    page.on("websocket", wire.attach)
    try:
        yield page, problems
    finally:
        await context.close()


# --- the scenario --------------------------------------------------------------------------


async def seed(gateway: RunningGateway) -> None:
    """Two conversations with a past question and answer each, and the main session, which the
    UI's Home page opens (OpenClaw's gateway always has it; on a fresh clawline store the page
    logs "route navigation failed {type: notFound}" until it exists — docs/control-ui.md)."""
    client = await GatewayClient.connect(gateway.url, token=TOKEN)
    try:
        await client.request("sessions.create", {"key": "main"})
        for key, message in ((NOTES, "remember the milk"), (OTHER, "hello there")):
            await client.request(
                "chat.send", {"sessionKey": key, "message": message, "idempotencyKey": key}
            )
            await client.request("agent.wait", {"runId": key, "timeoutMs": TIMEOUT_MS})
    finally:
        await client.close()


async def children_of(gateway: RunningGateway, parent: str) -> list[str]:
    runtime = gateway.runtime
    page = await runtime.call(runtime.catalog.page, SessionQuery(spawned_by=parent), limit=9)
    return [entry.key for entry in page.entries]


async def no_error_shown(page: Page, view: str) -> None:
    main = page.locator("main").first
    await expect(main).not_to_contain_text("unknown method", timeout=1)
    await expect(main).not_to_contain_text("invalid ", timeout=1)
    banners = page.locator(ERROR_BANNERS)
    assert await banners.count() == 0, f"{view}: {await banners.all_inner_texts()}"


async def drive(page: Page, wire: Wire, gateway: RunningGateway, origin: str, shots: Path) -> None:
    """The scenario, in the UI."""
    page.set_default_timeout(TIMEOUT_MS)
    # Log in: the link names another gateway than the page's origin; the UI asks first.
    await page.goto(f"{origin}/?gatewayUrl={gateway.url}/ws#token={TOKEN}")
    switch = page.get_by_role("button", name=f"Switch to 127.0.0.1:{gateway.port}")
    await switch.click()
    await expect(page.get_by_text("Connected", exact=True).first).to_be_attached()
    assert "connect" in wire.methods

    # The sidebar lists the sessions.
    sidebar = page.locator(".sidebar-recent-session__link")
    await expect(sidebar.filter(has_text="remember the milk")).to_be_visible()
    await expect(sidebar.filter(has_text="hello there")).to_be_visible()
    await page.screenshot(path=shots / "1-home.png")
    await no_error_shown(page, "Home")

    # Opening a session shows its history.
    chat = page.get_by_role("region", name="Chat")
    await sidebar.filter(has_text="remember the milk").click()
    await expect(chat.get_by_text("echo: remember the milk")).to_be_visible()
    await page.screenshot(path=shots / "2-history.png")

    # The composer: the agent's reply streams in (chat deltas, then the final).
    composer = page.get_by_role("textbox", name="Chat composer")
    await composer.fill("what is on the list")
    await composer.press("Enter")
    await expect(chat.get_by_text("echo: what is on the list")).to_be_visible()
    states = wire.chat_states(NOTES)
    assert "delta" in states, states
    assert states[-1] == "final", states
    await page.screenshot(path=shots / "3-reply.png")

    # Two subagents: OpenClaw's UI shows a parent's running subagents above its composer,
    # never as sidebar rows, from the `task` events of the parent's session (task summaries).
    await composer.fill(SLOW_CHILDREN)
    await composer.press("Enter")

    async def two_children() -> bool:
        return len(await children_of(gateway, NOTES)) == 2

    await eventually(two_children, what="two subagents of the parent")
    activity = page.locator(".chat-subagent-activity__row")
    await expect(activity).to_have_count(2)
    children = await children_of(gateway, NOTES)
    for child in children:
        await expect(page.locator(f'[data-session-key="{child}"]')).to_have_count(0)
    await page.screenshot(path=shots / "4-subagents-running.png")
    await expect(chat.get_by_text("results: sessions_spawn accepted x2")).to_be_visible()
    await expect(activity).to_have_count(0, timeout=15_000)
    await page.screenshot(path=shots / "5-subagents-done.png")

    for n, view in enumerate(("Agents", "Systems", "Plugins", "Home"), start=6):
        link = page.get_by_role("navigation").get_by_role("link", name=view, exact=True)
        href = await link.get_attribute("href")
        assert href is not None, view
        await link.click()
        await expect(page).to_have_url(re.compile(re.escape(href) + "$"))
        await page.wait_for_load_state("networkidle")
        await page.screenshot(path=shots / f"{n}-{view.lower()}.png")
        await no_error_shown(page, view)


async def test_openclaw_control_ui_drives_clawline(
    gateway: RunningGateway, ui_origin: str, browser: Browser, artifacts: Path
) -> None:
    await seed(gateway)
    wire = Wire(gateway.url)
    try:
        async with ui_page(browser, wire) as (page, problems):
            await drive(page, wire, gateway, ui_origin, artifacts)
    finally:
        (artifacts / "wire.txt").write_text(wire.summary() + "\n")

    assert problems == [], problems
    methods = compatibility_table("Methods")
    events = compatibility_table("Events")
    assert sorted(wire.methods - methods.keys()) == [], "methods missing from docs/control-ui.md"
    assert sorted(wire.event_names - events.keys()) == [], "events missing from docs/control-ui.md"
    not_sent = sorted(name for name in wire.event_names if events[name] != "served")
    assert not_sent == [], f"events the table says clawline does not send: {not_sent}"
    refused = {
        method: sorted({error for ok, error in answers if not ok})
        for method, answers in wire.answers.items()
        if methods.get(method, "").startswith("served") and not all(ok for ok, _ in answers)
    }
    assert refused == {}, f"served methods refused a request of the UI: {refused}"
    unknown = sorted(
        method
        for method, answers in wire.answers.items()
        if methods.get(method) == "not served" and any(ok for ok, _ in answers)
    )
    assert unknown == [], f"the table says not served, the gateway answered: {unknown}"
