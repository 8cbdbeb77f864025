"""Origin and Host checks (cross-site WebSocket hijacking, DNS rebinding): raw HTTP requests and
WebSocket upgrades over real sockets to a real gateway, the refusal log, and the settings."""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.types import Message, Receive, Scope, Send

from clawline.config import ConfigError, Settings
from clawline.gateway.options import GatewaySettings, resolve_gateway_settings
from clawline.gateway.origin import REPORTED_LIMIT, OriginHostCheck
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.types import JSON
from tests.gateway.wire import WireClient

TOKEN = "origin-test-token-0123456789"
LISTED = "http://localhost:5173"
"""The origin the ``listed`` gateway has in ``allowedOrigins``."""
NAMED = "gw.example"
"""The name the ``listed`` gateway has in ``allowedHosts``."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: Mapping[str, str]
    body: bytes


async def send_raw(port: int, request: bytes) -> Answer:
    """Send one raw HTTP request; read the status line, headers and (unless 101) the body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        status_line, *lines = head.decode("latin-1").split("\r\n")[:-2]
        headers = {
            name.strip().lower(): value.strip()
            for name, value in (line.split(":", 1) for line in lines)
        }
        status = int(status_line.split(" ")[1])
        body = b""
        if status != 101 and not request.startswith(b"HEAD ") and "content-length" in headers:
            body = await asyncio.wait_for(reader.readexactly(int(headers["content-length"])), 5)
        return Answer(status, headers, body)
    finally:
        writer.close()
        await writer.wait_closed()


def request_bytes(
    method: str,
    path: str,
    headers: Mapping[str, str | None],
    *,
    version: str = "HTTP/1.1",
) -> bytes:
    lines = [f"{method} {path} {version}"]
    lines += [f"{name}: {value}" for name, value in headers.items() if value is not None]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def upgrade(
    gw: RunningGateway,
    *,
    origin: str | None = None,
    host: str | None = None,
    path: str = "/",
    extra: Mapping[str, str] | None = None,
) -> Answer:
    """A WebSocket upgrade request; ``host`` defaults to the address the gateway is bound to."""
    headers: dict[str, str | None] = {
        "Host": host or f"127.0.0.1:{gw.port}",
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
        "Sec-WebSocket-Version": "13",
        "Origin": origin,
        **(extra or {}),
    }
    return await send_raw(gw.port, request_bytes("GET", path, headers))


async def http(
    gw: RunningGateway,
    method: str = "GET",
    path: str = "/",
    *,
    origin: str | None = None,
    host: str | None = None,
) -> Answer:
    headers: dict[str, str | None] = {
        "Host": host or f"127.0.0.1:{gw.port}",
        "Origin": origin,
        "Content-Length": "0",
        "Connection": "close",
    }
    return await send_raw(gw.port, request_bytes(method, path, headers))


@pytest.fixture
async def default_gw(tmp_path: Path) -> AsyncIterator[RunningGateway]:
    """The default set-up the probe attacked: loopback, no auth (every connection is admin)."""
    async with running_gateway(tmp_path / "state", gateway_settings=GatewaySettings(port=0)) as gw:
        yield gw


@pytest.fixture
async def listed(tmp_path: Path) -> AsyncIterator[RunningGateway]:
    """A gateway configured (through config.toml's ``[gateway]``) to allow one more origin and
    one more host name."""
    raw: dict[str, Any] = {
        "gateway": {"port": 0, "allowedOrigins": [LISTED], "allowedHosts": [NAMED]}
    }
    settings = Settings(state_dir=tmp_path / "state", raw=raw)
    chosen = resolve_gateway_settings(settings, env={})
    async with running_gateway(
        tmp_path / "state", gateway_settings=chosen, settings=settings
    ) as gw:
        yield gw


# --- WebSocket upgrades -------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/ws"])
@pytest.mark.parametrize(
    "origin", ["http://evil.example", "https://evil.example:8443", "http://127.0.0.1"]
)
async def test_a_foreign_origin_is_refused_before_the_upgrade(
    default_gw: RunningGateway, origin: str, path: str
) -> None:
    answer = await upgrade(default_gw, origin=origin, path=path)
    assert answer.status == 403
    assert "sec-websocket-accept" not in answer.headers
    assert "upgrade" not in answer.headers
    assert answer.body == b""  # see OriginHostCheck: a denial body costs an ERROR log line


async def test_a_page_on_another_local_port_is_a_foreign_origin(
    default_gw: RunningGateway,
) -> None:
    other = default_gw.port + 1 if default_gw.port < 65535 else default_gw.port - 1
    for origin in (f"http://127.0.0.1:{other}", f"http://localhost:{other}"):
        assert (await upgrade(default_gw, origin=origin)).status == 403


async def test_origin_null_is_refused(default_gw: RunningGateway) -> None:
    assert (await upgrade(default_gw, origin="null")).status == 403


@pytest.mark.parametrize(
    "origin", ["", "http://evil.example/", "javascript:alert(1)", "http://[zz]:1"]
)
async def test_a_malformed_origin_is_refused(default_gw: RunningGateway, origin: str) -> None:
    assert (await upgrade(default_gw, origin=origin)).status == 403


async def test_several_origin_headers_are_refused(default_gw: RunningGateway) -> None:
    own = f"http://127.0.0.1:{default_gw.port}"
    twice = f"Origin: {own}\r\nOrigin: http://evil.example\r\n\r\n".encode()
    post = request_bytes("POST", "/", {"Host": f"127.0.0.1:{default_gw.port}"})
    answer = await send_raw(default_gw.port, post.replace(b"\r\n\r\n", b"\r\n" + twice))
    assert (answer.status, answer.body) == (403, b"origin not allowed\n")
    # on an upgrade, the WebSocket layer already refuses them (400) before the app is called
    websocket = await upgrade(default_gw, origin=own)
    assert websocket.status == 101
    one_upgrade = request_bytes(
        "GET",
        "/",
        {
            "Host": f"127.0.0.1:{default_gw.port}",
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
            "Sec-WebSocket-Version": "13",
        },
    )
    refused = await send_raw(default_gw.port, one_upgrade.replace(b"\r\n\r\n", b"\r\n" + twice))
    assert 400 <= refused.status < 500


async def test_no_origin_header_is_accepted(default_gw: RunningGateway) -> None:
    for path in ("/", "/ws"):
        answer = await upgrade(default_gw, path=path)
        assert answer.status == 101
        assert "sec-websocket-accept" in answer.headers
    # and the Python client (no Origin) completes the handshake
    client = await WireClient.open(default_gw.url)
    try:
        frame = await client.connect()
        assert frame["ok"] is True, frame
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("127.0.0.1:{port}", "http://127.0.0.1:{port}"),
        ("localhost:{port}", "http://localhost:{port}"),
        ("LOCALHOST:{port}", "http://localhost:{port}"),
        ("[::1]:{port}", "http://[::1]:{port}"),
        ("127.0.0.1:{port}", "https://127.0.0.1:{port}"),
        ("127.0.0.1", "http://127.0.0.1"),
        ("127.0.0.1:80", "http://127.0.0.1"),
        ("127.0.0.1", "https://127.0.0.1:443"),
    ],
)
async def test_the_gateways_own_origin_is_accepted(
    default_gw: RunningGateway, host: str, origin: str
) -> None:
    port = default_gw.port
    answer = await upgrade(default_gw, host=host.format(port=port), origin=origin.format(port=port))
    assert answer.status == 101


async def test_an_origin_listed_in_allowed_origins_is_accepted(listed: RunningGateway) -> None:
    assert (await upgrade(listed, origin=LISTED)).status == 101
    assert (await upgrade(listed, origin=LISTED.upper().replace("HTTP", "http"))).status == 101
    # only that exact origin: another port or scheme of the same host is still foreign
    assert (await upgrade(listed, origin="http://localhost:5174")).status == 403
    assert (await upgrade(listed, origin="https://localhost:5173")).status == 403
    assert (await upgrade(listed, origin="null")).status == 403


async def test_a_listed_null_origin_is_accepted(tmp_path: Path) -> None:
    settings = GatewaySettings(port=0, allowed_origins=frozenset({"null"}))
    async with running_gateway(tmp_path, gateway_settings=settings) as gw:
        assert (await upgrade(gw, origin="null")).status == 101
        assert (await upgrade(gw, origin="http://evil.example")).status == 403


# --- Host (DNS rebinding) -----------------------------------------------------------------


async def test_a_rebinding_host_is_refused_for_the_upgrade_and_every_http_route(
    default_gw: RunningGateway,
) -> None:
    port = default_gw.port
    rebound = f"evil.example:{port}"
    # the page's origin matches the Host it sent: only the Host check can refuse it
    assert (await upgrade(default_gw, host=rebound, origin=f"http://{rebound}")).status == 403
    assert (await upgrade(default_gw, host=rebound)).status == 403
    for path in ("/", "/static/js/main.js", "/health", "/readyz"):
        answer = await http(default_gw, path=path, host=rebound)
        assert (answer.status, answer.body) == (403, b"host not allowed\n"), path
    # the same requests under the bound address go through
    assert (await http(default_gw, path="/")).status == 200
    assert (await http(default_gw, path="/health")).status == 200


@pytest.mark.parametrize("host", ["10.1.2.3:9", "[fe80::1]", "localhost", "localhost.:1"])
async def test_ip_literals_and_localhost_are_accepted_hosts(
    default_gw: RunningGateway, host: str
) -> None:
    assert (await http(default_gw, host=host)).status == 200


@pytest.mark.parametrize(
    "host", ["evil.example", "127.0.0.1.nip.io", "app.localhost", "127.0.0.1:http", "a b"]
)
async def test_other_hosts_are_refused(default_gw: RunningGateway, host: str) -> None:
    assert (await http(default_gw, host=host)).status == 403


async def test_a_name_listed_in_allowed_hosts_is_accepted_on_any_port(
    listed: RunningGateway,
) -> None:
    for host in (f"{NAMED}:{listed.port}", NAMED, f"{NAMED.upper()}:8080"):
        assert (await http(listed, host=host)).status == 200, host
    own = f"http://{NAMED}:{listed.port}"
    assert (await upgrade(listed, host=f"{NAMED}:{listed.port}", origin=own)).status == 101
    assert (await http(listed, host=f"other.example:{listed.port}")).status == 403


async def test_a_request_without_a_host_is_refused(default_gw: RunningGateway) -> None:
    http10 = await send_raw(default_gw.port, b"GET / HTTP/1.0\r\n\r\n")
    assert (http10.status, http10.body) == (403, b"host not allowed\n")
    http11 = await send_raw(default_gw.port, b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
    assert 400 <= http11.status < 500


# --- HTTP requests that act ---------------------------------------------------------------


async def test_http_requests_other_than_get_and_head_get_the_origin_check(
    default_gw: RunningGateway,
) -> None:
    own = f"http://127.0.0.1:{default_gw.port}"
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
        answer = await http(default_gw, method, origin="http://evil.example")
        assert (answer.status, answer.body) == (403, b"origin not allowed\n"), method
        # past the check, the router answers (no route acts on these methods today)
        assert (await http(default_gw, method, origin=own)).status == 405, method
        assert (await http(default_gw, method)).status == 405, method


async def test_reading_routes_ignore_the_origin(default_gw: RunningGateway) -> None:
    for method in ("GET", "HEAD"):
        answer = await http(default_gw, method, "/health", origin="http://evil.example")
        assert answer.status == 200, method


# --- the refusal log ----------------------------------------------------------------------


def open_uvicorn_logs(caplog: pytest.LogCaptureFixture) -> logging.Logger:
    """uvicorn sets its loggers' levels when it starts and its "uvicorn" logger does not
    propagate: open them up to INFO (its "WebSocket / 403" lines) and listen directly (the
    caller removes the handler). Not DEBUG: there the websockets library dumps every request
    header as received, whatever a client put in them."""
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        caplog.set_level(logging.INFO, logger=name)
    uvicorn_logger = logging.getLogger("uvicorn")
    uvicorn_logger.addHandler(caplog.handler)
    return uvicorn_logger


async def test_each_refused_origin_and_host_is_logged_once_without_the_token(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    async with running_gateway(tmp_path, gateway_settings=settings) as gw:
        uvicorn_logger = open_uvicorn_logs(caplog)
        try:
            credentials = {"Authorization": f"Bearer {TOKEN}", "Cookie": f"token={TOKEN}"}
            for _ in range(3):
                for origin in ("http://evil.example", "http://other.example"):
                    answer = await upgrade(gw, origin=origin, extra=credentials)
                    assert answer.status == 403
                assert (await http(gw, host=f"rebind.example:{gw.port}")).status == 403
            # an accepted client with the token in its connect frame
            client = await WireClient.open(gw.url)
            try:
                assert (await client.connect(token=TOKEN))["ok"] is True
            finally:
                await client.close()
        finally:
            uvicorn_logger.removeHandler(caplog.handler)
    refusals = [
        record
        for record in caplog.records
        if record.name == "clawline.gateway.origin" and record.levelno == logging.WARNING
    ]
    messages = [record.getMessage() for record in refusals]
    assert len(messages) == 3, messages
    assert sum("'http://evil.example'" in message for message in messages) == 1
    assert sum("'http://other.example'" in message for message in messages) == 1
    assert sum(f"'rebind.example:{gw.port}'" in message for message in messages) == 1
    assert all("allowedOrigins" in m for m in messages if "origin " in m)
    assert any("allowedHosts" in message for message in messages)
    # the test's own client logs its frames (with the token) under websockets.client
    gateway_records = [r for r in caplog.records if not r.name.startswith("websockets.client")]
    assert any(record.name.startswith("uvicorn") for record in gateway_records)
    assert [r.getMessage() for r in gateway_records if r.levelno >= logging.ERROR] == []
    assert not any(TOKEN in record.getMessage() for record in gateway_records)
    assert not any(TOKEN in str(record.args) for record in gateway_records)


async def _ignore(scope: Scope, receive: Receive, send: Send) -> None:
    raise AssertionError("a refused request reached the app")


async def test_a_flood_of_distinct_origins_cannot_grow_memory_or_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="clawline.gateway.origin")
    check = OriginHostCheck(_ignore)
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        return {"type": "http.request", "body": b""}

    flood = REPORTED_LIMIT * 3
    for n in range(flood):
        scope: dict[str, Any] = {
            "type": "http",
            "method": "POST",
            "path": "/",
            "headers": [(b"host", b"127.0.0.1:1"), (b"origin", f"http://e{n}.example".encode())],
        }
        await check(scope, receive, send)
    statuses = [message["status"] for message in sent if message["type"] == "http.response.start"]
    assert statuses == [403] * flood
    assert len(check.refusals.reported) == REPORTED_LIMIT
    warnings = [r for r in caplog.records if r.name == "clawline.gateway.origin"]
    assert len(warnings) == REPORTED_LIMIT + 1
    assert "further ones are refused without a log line" in warnings[-1].getMessage()


# --- settings -----------------------------------------------------------------------------


def resolve(section: dict[str, JSON]) -> GatewaySettings:
    settings = Settings(state_dir=Path("/nonexistent"), raw={"gateway": section})
    return resolve_gateway_settings(settings, env={})


def test_no_extra_origin_or_host_is_allowed_by_default() -> None:
    assert resolve({}).allowed_origins == frozenset() == GatewaySettings().allowed_origins
    assert resolve({}).allowed_hosts == frozenset() == GatewaySettings().allowed_hosts


def test_allowed_origins_are_kept_in_canonical_form() -> None:
    chosen = resolve(
        {"allowedOrigins": ["HTTP://LocalHost:5173", "https://app.example:443", "null"]}
    )
    assert chosen.allowed_origins == {"http://localhost:5173", "https://app.example", "null"}
    assert resolve({"allowedOrigins": ["http://[::1]:80"]}).allowed_origins == {"http://[::1]"}
    assert resolve({"allowedOrigins": ["tauri://localhost"]}).allowed_origins == {
        "tauri://localhost"
    }


def test_allowed_hosts_are_kept_lowercase_without_a_trailing_dot() -> None:
    chosen = resolve({"allowedHosts": ["Gateway.LAN.", "my-box.tail0123.ts.net", "10.0.0.5"]})
    assert chosen.allowed_hosts == {"gateway.lan", "my-box.tail0123.ts.net", "10.0.0.5"}


def test_a_wildcard_origin_is_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve({"allowedOrigins": ["http://localhost:5173", "*"]})
    assert caught.value.message == (
        'gateway allowedOrigins: "*" is not accepted (it would let every web page drive the '
        "gateway); list the origins instead"
    )


@pytest.mark.parametrize(
    "entry",
    [
        "localhost:5173",
        "http://localhost:5173/",
        "http://localhost:5173/app",
        "http://user@localhost",
        "http://localhost:99999",
        "http://localhost:",
        "http://",
        "",
        "http://*.example.com",
    ],
)
def test_a_malformed_origin_entry_is_refused(entry: str) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve({"allowedOrigins": [entry]})
    assert caught.value.message == (
        f"gateway allowedOrigins: {entry!r} is not an origin (scheme://host[:port], no path "
        'or trailing slash, e.g. "http://localhost:5173")'
    )


@pytest.mark.parametrize("entry", ["*", "*.example.com", "gw.*"])
def test_a_wildcard_host_is_refused(entry: str) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve({"allowedHosts": [entry]})
    assert caught.value.message == (
        f"gateway allowedHosts: {entry!r}: wildcards are not accepted (they would undo the "
        "DNS-rebinding check); list the names instead"
    )


@pytest.mark.parametrize("entry", ["gw.lan:8080", "http://gw.lan", "gw lan", "", "gw..lan"])
def test_a_malformed_host_entry_is_refused(entry: str) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve({"allowedHosts": [entry]})
    assert caught.value.message == (
        f"gateway allowedHosts: {entry!r} is not a host name (a name without scheme or port, "
        'e.g. "gateway.lan")'
    )


@pytest.mark.parametrize("key", ["allowedOrigins", "allowedHosts"])
@pytest.mark.parametrize("value", ["http://localhost:5173", [1], {"a": "b"}, True])
def test_the_keys_must_be_lists_of_strings(key: str, value: JSON) -> None:
    with pytest.raises(ConfigError) as caught:
        resolve({key: value})
    rule = "origins" if key == "allowedOrigins" else "host names"
    assert caught.value.message == f"config: gateway.{key} must be a list of {rule}"


def test_bad_entries_passed_to_the_settings_directly_are_refused_at_start() -> None:
    with pytest.raises(ConfigError, match="is not an origin"):
        OriginHostCheck(_ignore, allowed_origins=["evil.example"])


def test_gateway_run_refuses_a_wildcard_origin_at_start(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").write_text('[gateway]\nallowedOrigins = ["*"]\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWLINE_")}
    result = subprocess.run(
        [str(Path(sys.executable).with_name("clawline")), "gateway", "run", "--port", "0"],
        env={**env, "CLAWLINE_STATE_DIR": str(state)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        'error: gateway allowedOrigins: "*" is not accepted (it would let every web page drive '
        "the gateway); list the origins instead\n"
    )
