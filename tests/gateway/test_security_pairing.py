"""Device pairing on a ``require_device`` gateway, over real sockets with real Ed25519 keys.

The operator's side runs on a store object of its own over the gateway's SQLite file, as
``clawline devices`` in another process would.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from clawline.client.client_errors import ConnectError, GatewayRequestError
from clawline.client.connection import GatewayClient
from clawline.config import Settings
from clawline.gateway.device import DeviceIdentity
from clawline.gateway.options import GatewaySettings
from clawline.gateway.pairing_watch import REVOKED_REASON
from clawline.pairing.registry import PairingRegistry
from clawline.pairing.scopes import ADMIN, READ, WRITE
from clawline.records.pairing import PENDING, InvalidPairingCode
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.types import JSONObject
from tests.gateway.conftest import TOKEN

CHECK_INTERVAL_S = 0.2
WRITE_PROBE: JSONObject = {"taskId": "nope"}
"""tasks.cancel of an unknown task: ``task not found`` with write scope, else missing scope."""
REQUEST = re.compile(
    r"pairing request from device (?P<short>[0-9a-f]{12})… \((?P<who>[^)]*)\) for "
    r"(?P<scopes>\S+): approve with: clawline devices approve (?P<code>[0-9A-Z]{3}-[0-9A-Z]{3})"
)


class Lines(logging.Handler):
    """Every message the gateway logs, in order."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def requests(self) -> list[re.Match[str]]:
        return [m for m in map(REQUEST.fullmatch, self.messages) if m is not None]


@pytest.fixture
def log_lines() -> Iterator[Lines]:
    lines = Lines()
    logger = logging.getLogger("clawline.gateway")
    previous = logger.level
    logger.addHandler(lines)
    logger.setLevel(logging.DEBUG)
    yield lines
    logger.removeHandler(lines)
    logger.setLevel(previous)


@pytest.fixture
async def strict(tmp_path: Path) -> AsyncIterator[RunningGateway]:
    settings = GatewaySettings(
        port=0,
        auth="token",
        token=TOKEN,
        require_device=True,
        pairing_check_interval_s=CHECK_INTERVAL_S,
    )
    async with running_gateway(tmp_path / "state", gateway_settings=settings) as gw:
        yield gw


@pytest.fixture
def operator(strict: RunningGateway) -> Iterator[PairingRegistry]:
    """The operator's registry, on its own connection to the gateway's store."""
    store = SQLiteStore(Settings(state_dir=strict.runtime.settings.state_dir).sqlite_path)
    yield PairingRegistry(store=store, clock=strict.runtime.clock)
    store.close()


async def connect(gw: RunningGateway, identity: DeviceIdentity, *scopes: str) -> GatewayClient:
    return await GatewayClient.connect(
        gw.url, token=TOKEN, device=identity, scopes=scopes or (READ, WRITE)
    )


async def refusal(client: GatewayClient, method: str, params: JSONObject) -> str:
    with pytest.raises(GatewayRequestError) as caught:
        await client.request(method, params)
    return caught.value.message


async def closed_within(client: GatewayClient, seconds: float) -> str:
    lost = await asyncio.wait_for(client.wait_disconnected(), seconds)
    assert lost is not None
    return lost.message


async def test_an_unpaired_device_gets_no_scopes_and_a_printed_code(
    strict: RunningGateway, operator: PairingRegistry, log_lines: Lines
) -> None:
    identity = DeviceIdentity.generate()
    async with await connect(strict, identity, READ, WRITE) as client:
        assert client.scopes == ()
        assert client.hello["auth"] == {
            "method": "token",
            "role": "operator",
            "scopes": [],
            "deviceId": identity.device_id,
        }
        message = await refusal(client, "sessions.list", {})
        assert message == "missing scope: operator.read"
        health = await client.request("health")  # needs no scope
        assert isinstance(health, dict)
        assert health["status"] == "live"
    (request,) = log_lines.requests()
    assert request["short"] == identity.device_id[:12]
    assert request["scopes"] == "operator.read,operator.write"
    assert request["who"].startswith("cli on ")
    assert not any(TOKEN in line for line in log_lines.messages)
    stored = operator.store.pairings.get(identity.device_id)
    assert stored is not None
    assert stored.status == PENDING
    assert stored.requested_scopes == (READ, WRITE)


async def test_the_printed_code_pairs_the_device(
    strict: RunningGateway, operator: PairingRegistry, log_lines: Lines
) -> None:
    identity = DeviceIdentity.generate()
    waiting = await connect(strict, identity, ADMIN)
    try:
        (request,) = log_lines.requests()
        paired = await asyncio.to_thread(operator.approve_code, request["code"])
        assert paired.granted_scopes == (ADMIN,)
        async with await connect(strict, identity, ADMIN) as client:
            assert client.scopes == (ADMIN,)
            assert await client.request("sessions.list", {}) is not None
        # the connection made before the approval is not widened: it reconnects for scopes
        assert await refusal(waiting, "sessions.list", {}) == "missing scope: operator.read"
    finally:
        await waiting.close()
    assert len(log_lines.requests()) == 1  # a paired device's connect prints nothing


async def test_a_narrowed_grant_refuses_write_methods(
    strict: RunningGateway, operator: PairingRegistry, log_lines: Lines
) -> None:
    identity = DeviceIdentity.generate()
    await (await connect(strict, identity, READ, WRITE)).close()
    (request,) = log_lines.requests()
    await asyncio.to_thread(operator.approve_code, request["code"], [READ])
    async with await connect(strict, identity, READ, WRITE) as client:
        assert client.scopes == (READ,)
        assert await client.request("sessions.list", {}) is not None
        message = await refusal(client, "tasks.cancel", {"taskId": "nope"})
        assert message == "missing scope: operator.write"


async def test_revocation_refuses_connects_and_cuts_open_connections(
    strict: RunningGateway, operator: PairingRegistry, log_lines: Lines
) -> None:
    identity, bystander = DeviceIdentity.generate(), DeviceIdentity.generate()
    for device in (identity, bystander):
        await (await connect(strict, device)).close()
    for request in log_lines.requests():
        await asyncio.to_thread(operator.approve_code, request["code"])
    client, other = await connect(strict, identity), await connect(strict, bystander)
    try:
        assert client.scopes == (READ, WRITE)
        revoked_at = time.monotonic()
        await asyncio.to_thread(operator.revoke, identity.device_id[:10])
        message = await closed_within(client, CHECK_INTERVAL_S + 5)
        elapsed = time.monotonic() - revoked_at
        assert message.endswith(f"closed with code 1008 ({REVOKED_REASON})"), message
        assert elapsed < CHECK_INTERVAL_S * 5, elapsed
        assert other.connected
        assert await other.request("sessions.list", {}) is not None
    finally:
        await client.close()
        await other.close()
    with pytest.raises(ConnectError) as refused:
        await connect(strict, identity)
    assert refused.value.code == "NOT_PAIRED"
    assert refused.value.message.startswith("device pairing revoked: device ")
    assert len(log_lines.requests()) == 2  # the refused connect asked for no new pairing


async def test_narrowing_a_grant_narrows_open_connections(
    strict: RunningGateway, operator: PairingRegistry, log_lines: Lines
) -> None:
    identity = DeviceIdentity.generate()
    await (await connect(strict, identity, ADMIN)).close()
    (request,) = log_lines.requests()
    await asyncio.to_thread(operator.approve_code, request["code"])
    async with await connect(strict, identity, ADMIN) as client:
        assert client.scopes == (ADMIN,)
        assert await refusal(client, "tasks.cancel", WRITE_PROBE) == "task not found: nope"
        await asyncio.to_thread(operator.approve_device, identity.device_id, [READ])
        deadline = time.monotonic() + CHECK_INTERVAL_S + 5
        while await refusal(client, "tasks.cancel", WRITE_PROBE) != "missing scope: operator.write":
            assert time.monotonic() < deadline, "the open connection kept write access"
            await asyncio.sleep(0.05)
        assert client.connected
        assert await client.request("sessions.list", {}) is not None


async def test_a_new_connect_replaces_the_code_of_the_last_one(
    strict: RunningGateway, operator: PairingRegistry, log_lines: Lines
) -> None:
    identity = DeviceIdentity.generate()
    for _ in range(2):
        await (await connect(strict, identity)).close()
    first, second = log_lines.requests()
    assert first["code"] != second["code"]
    with pytest.raises(InvalidPairingCode, match="no pending pairing request has this code"):
        await asyncio.to_thread(operator.approve_code, first["code"])
    assert (await asyncio.to_thread(operator.approve_code, second["code"])).status == "paired"


async def test_without_require_device_a_fresh_key_keeps_its_scopes(
    tmp_path: Path, log_lines: Lines
) -> None:
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    async with running_gateway(tmp_path / "state", gateway_settings=settings) as gw:
        identity = DeviceIdentity.generate()
        async with await connect(gw, identity, ADMIN) as client:
            assert client.scopes == (ADMIN,)
        assert gw.runtime.store.pairings.all() == []
    assert log_lines.requests() == []
