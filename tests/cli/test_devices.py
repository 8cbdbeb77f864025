"""``clawline devices list|approve|revoke``: in-process over the state directory's store, and
once end to end against ``clawline gateway run`` in its own process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clawline.client.client_errors import ConnectError, GatewayRequestError
from clawline.client.connection import GatewayClient
from clawline.gateway.device import DeviceIdentity
from clawline.pairing.registry import CODE_TTL_MS, PairingRegistry
from clawline.pairing.scopes import ADMIN, READ, WRITE
from clawline.records.pairing import PAIRED, PENDING, REVOKED, DeviceClaim, DevicePairing
from clawline.store.sqlite.store import SQLiteStore
from clawline.testing import FakeClock

from .helpers import Cli, cells
from .test_docs import documented_fields

SCRIPT = Path(sys.executable).with_name("clawline")
READY = re.compile(r"clawline gateway listening on (ws://127\.0\.0\.1:\d+)\n")
CODE = re.compile(r"approve with: clawline devices approve ([0-9A-Z]{3}-[0-9A-Z]{3})$")


@pytest.fixture
def registry(db_path: Path, clock: FakeClock) -> Iterator[PairingRegistry]:
    """The pairing registry over the store the CLI uses, on the CLI's clock."""
    store = SQLiteStore(db_path)
    yield PairingRegistry(store=store, clock=clock)
    store.close()


def request(
    registry: PairingRegistry, *scopes: str, identity: DeviceIdentity | None = None
) -> tuple[str, str]:
    """A pending request as a gateway would make it; ``(device id, code)``."""
    identity = identity or DeviceIdentity.generate()
    claim = DeviceClaim(
        device_id=identity.device_id,
        public_key=identity.public_key,
        client_id="cli",
        client_mode="cli",
        platform="linux",
        display_name=None,
        requested_scopes=scopes or (READ, WRITE),
    )
    code = registry.admit(claim).code
    assert code is not None
    return identity.device_id, code


def rows(db_path: Path) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(db_path)) as db:
        return db.execute("SELECT * FROM device_pairings ORDER BY device_id").fetchall()


def refused(clawline: Cli, *args: str, exit_code: int = 2) -> str:
    result = clawline.run("devices", *args)
    assert (result.exit_code, result.stdout) == (exit_code, ""), result.output
    assert result.stderr.startswith("error: ")
    assert result.stderr.count("\n") == 1
    return result.stderr.removeprefix("error: ").rstrip("\n")


# --- list -----------------------------------------------------------------------------------


def test_list_without_devices(clawline: Cli) -> None:
    assert clawline.ok("devices", "list") == "no devices\n"
    assert json.loads(clawline.ok("devices", "list", "--format", "json")) == {
        "devices": [],
        "count": 0,
    }


def test_list_shows_pending_paired_and_revoked_but_never_a_code(
    clawline: Cli, registry: PairingRegistry, clock: FakeClock
) -> None:
    paired, paired_code = request(registry, ADMIN)
    registry.approve_code(paired_code)
    revoked, _ = request(registry)
    registry.revoke(revoked)
    clock.advance(5 * 60_000)
    pending, pending_code = request(registry, READ)
    clock.advance(3 * 60_000)
    table = clawline.ok("devices", "list")
    assert cells(table) == [
        ["DEVICE", "STATUS", "CLIENT", "REQUESTED", "GRANTED", "SINCE"],
        [pending[:16], "pending", "cli (cli) on linux", READ, "-", "3m ago"],
        [paired[:16], "paired", "cli (cli) on linux", ADMIN, ADMIN, "8m ago"],
        [revoked[:16], "revoked", "cli (cli) on linux", f"{READ},{WRITE}", "-", "8m ago"],
    ]
    listed = json.loads(clawline.ok("devices", "list", "--format", "json"))
    assert [(d["deviceId"], d["status"]) for d in listed["devices"]] == [
        (pending, "pending"),
        (paired, "paired"),
        (revoked, "revoked"),
    ]
    assert listed["devices"][0]["codeExpiresAt"] == clock.now_ms() - 3 * 60_000 + CODE_TTL_MS
    for text in (table, json.dumps(listed)):
        assert pending_code not in text
        assert pending_code.replace("-", "") not in text
    assert all("codeHash" not in device for device in listed["devices"])


def test_the_device_row_is_documented_in_output_order(
    clawline: Cli, registry: PairingRegistry
) -> None:
    request(registry)
    (row,) = json.loads(clawline.ok("devices", "list", "--format", "json"))["devices"]
    assert list(row) == documented_fields("Device row")


# --- approve --------------------------------------------------------------------------------


def test_approve_by_code_grants_the_request(
    clawline: Cli, registry: PairingRegistry, db_path: Path
) -> None:
    device_id, code = request(registry, READ, WRITE)
    out = clawline.ok("devices", "approve", f" {code.lower()} ")
    assert out == f"paired device {device_id} (cli (cli) on linux) with {READ},{WRITE}\n"
    stored = registry.store.pairings.get(device_id)
    assert stored is not None
    assert (stored.status, stored.granted_scopes, stored.code_hash) == (PAIRED, (READ, WRITE), None)


def test_approve_with_fewer_scopes(clawline: Cli, registry: PairingRegistry) -> None:
    device_id, code = request(registry, READ, WRITE, ADMIN)
    out = clawline.ok("devices", "approve", code, "--scopes", f"{READ}, {WRITE}")
    assert out.endswith(f"with {READ},{WRITE}\n")
    stored = registry.store.pairings.get(device_id)
    assert stored is not None
    assert stored.granted_scopes == (READ, WRITE)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give the pairing code the gateway printed, or --device ID"),
        (("ABC-DEF", "--device", "abcdef"), "give the pairing code the gateway printed, or"),
        (("7QX-4K",), "not a pairing code: '7QX-4K' (expected 6 letters and digits"),
        (("7QX-4K!",), "not a pairing code: '7QX-4K!'"),
        (("ZZZ-ZZZ",), "no pending pairing request has this code"),
        (("{code}", "--scopes", ADMIN), f"cannot grant {ADMIN}: device "),
        (("{code}", "--scopes", "operator.root"), "unknown scope 'operator.root'"),
        (("{code}", "--scopes", ","), "no scopes to grant"),
        (("--device", "xyz123"), "not a device id: 'xyz123'"),
        (("--device", "abc"), "not a device id: 'abc' (give the id, or at least its first 6"),
    ],
)
def test_bad_approvals_change_nothing(
    clawline: Cli,
    registry: PairingRegistry,
    db_path: Path,
    args: tuple[str, ...],
    message: str,
) -> None:
    _, code = request(registry, READ, WRITE)
    if code.replace("-", "") == "ZZZZZZ":  # the wrong code must really be wrong
        _, code = request(registry, READ, WRITE)
    before = rows(db_path)
    error = refused(clawline, "approve", *(arg.replace("{code}", code) for arg in args))
    assert error.startswith(message), error
    assert rows(db_path) == before


def test_a_code_is_single_use(clawline: Cli, registry: PairingRegistry, db_path: Path) -> None:
    _, code = request(registry)
    clawline.ok("devices", "approve", code)
    before = rows(db_path)
    assert refused(clawline, "approve", code).startswith("no pending pairing request")
    assert rows(db_path) == before


def test_an_expired_code_is_refused(
    clawline: Cli, registry: PairingRegistry, clock: FakeClock, db_path: Path
) -> None:
    device_id, code = request(registry)
    clock.advance(CODE_TTL_MS)
    before = rows(db_path)
    error = refused(clawline, "approve", code)
    assert error == (
        f"pairing code expired (codes last 10 minutes): connect device {device_id[:12]}… "
        "again for a new one"
    )
    assert rows(db_path) == before


def test_approve_by_device_prefix(clawline: Cli, registry: PairingRegistry, db_path: Path) -> None:
    device_id, _ = request(registry, ADMIN)
    out = clawline.ok("devices", "approve", "--device", device_id[:8].upper())
    assert out == f"paired device {device_id} (cli (cli) on linux) with {ADMIN}\n"
    # a paired device's grant can be changed the same way
    clawline.ok("devices", "approve", "--device", device_id, "--scopes", READ)
    stored = registry.store.pairings.get(device_id)
    assert stored is not None
    assert stored.granted_scopes == (READ,)
    assert refused(clawline, "approve", "--device", "0" * 64, exit_code=1) == (
        f"no device matches '{'0' * 64}' (see clawline devices list)"
    )


def test_an_ambiguous_prefix_is_refused(
    clawline: Cli, registry: PairingRegistry, db_path: Path, clock: FakeClock
) -> None:
    now = clock.now_ms()
    twins = [
        DevicePairing(
            device_id=f"abcdef{digit}" + "0" * 57,
            public_key=f"key-{digit}",
            status=PENDING,
            client_id="cli",
            client_mode="cli",
            platform="linux",
            display_name=None,
            requested_scopes=(READ,),
            granted_scopes=(),
            created_at=now,
            requested_at=now,
            updated_at=now,
        )
        for digit in "12"
    ]
    with registry.store.transaction() as tx:
        for twin in twins:
            tx.pairings.save(twin)
    before = rows(db_path)
    for args in (("approve", "--device", "ABCDEF"), ("revoke", "abcdef")):
        error = refused(clawline, *args)
        assert error == (
            "device prefix 'abcdef' is ambiguous (matches at least abcdef100000… and "
            "abcdef200000…): give more digits"
        )
    assert rows(db_path) == before
    assert clawline.ok("devices", "revoke", "abcdef2").startswith("revoked device abcdef2")


# --- revoke ---------------------------------------------------------------------------------


def test_revoke_and_revoke_again(clawline: Cli, registry: PairingRegistry, db_path: Path) -> None:
    device_id, code = request(registry)
    clawline.ok("devices", "approve", code)
    assert clawline.ok("devices", "revoke", device_id[:6]) == f"revoked device {device_id}\n"
    stored = registry.store.pairings.get(device_id)
    assert stored is not None
    assert stored.status == REVOKED
    before = rows(db_path)
    again = clawline.ok("devices", "revoke", device_id)
    assert again == f"device {device_id} was already revoked\n"
    error = refused(clawline, "approve", "--device", device_id)
    assert error.startswith(f"device {device_id[:12]}… is revoked; a revoked device identity")
    assert rows(db_path) == before


# --- end to end -----------------------------------------------------------------------------


class GatewayRun:
    """``clawline gateway run`` with its stderr collected line by line as it comes."""

    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url
        self.lines: list[str] = []
        assert process.stderr is not None
        stderr = process.stderr
        self._reader = threading.Thread(target=self._read, args=(stderr,), daemon=True)
        self._reader.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: re.Pattern[str], seconds: float = 10) -> re.Match[str]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if (match := pattern.search(line)) is not None:
                    return match
            time.sleep(0.02)
        raise AssertionError(f"no line matching {pattern.pattern!r} in {self.lines}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._reader.join(timeout=10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@contextlib.contextmanager
def gateway_run(env: dict[str, str]) -> Iterator[GatewayRun]:
    process = subprocess.Popen(
        [str(SCRIPT), "gateway", "run", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    run: GatewayRun | None = None
    try:
        assert process.stdout is not None
        match = READY.fullmatch(process.stdout.readline())
        assert match is not None, "no ready line"
        run = GatewayRun(process, match.group(1))
        yield run
    finally:
        if run is not None:
            run.stop()
        elif process.poll() is None:
            process.kill()
            process.communicate(timeout=10)


def devices_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "devices", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_pairing_through_the_code_printed_by_gateway_run(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").write_text("[gateway]\nrequire_device = true\n", encoding="utf-8")
    token = "pairing-e2e-token-31"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CLAWLINE_")}
    env = {**clean, "CLAWLINE_STATE_DIR": str(state), "CLAWLINE_GATEWAY_TOKEN": token}
    identity = DeviceIdentity.generate()
    with gateway_run(env) as gw:
        async with await GatewayClient.connect(gw.url, token=token, device=identity) as first:
            assert first.scopes == ()
            with pytest.raises(GatewayRequestError, match=r"missing scope: operator\.read"):
                await first.request("sessions.list", {})
        code = (await asyncio.to_thread(gw.wait_for, CODE))[1]
        approved = await asyncio.to_thread(devices_cli, env, "approve", code, "--scopes", READ)
        assert (approved.returncode, approved.stderr) == (0, ""), approved.stderr
        assert approved.stdout.startswith(f"paired device {identity.device_id} ")
        client = await GatewayClient.connect(gw.url, token=token, device=identity)
        try:
            assert client.scopes == (READ,)
            assert await client.request("sessions.list", {}) is not None
            started = time.monotonic()
            revoked = await asyncio.to_thread(devices_cli, env, "revoke", identity.device_id[:8])
            assert revoked.returncode == 0
            assert revoked.stdout == f"revoked device {identity.device_id}\n"
            lost = await asyncio.wait_for(client.wait_disconnected(), 10)
            assert lost is not None
            assert "1008 (device pairing revoked)" in lost.message
            assert time.monotonic() - started < 2.0 + 3  # the check interval, plus slack
        finally:
            await client.close()
        with pytest.raises(ConnectError) as refusal:
            await GatewayClient.connect(gw.url, token=token, device=identity)
        assert refusal.value.code == "NOT_PAIRED"
    assert not any(token in line for line in gw.lines)
    listed = devices_cli(env, "list", "--format", "json")
    assert [d["status"] for d in json.loads(listed.stdout)["devices"]] == ["revoked"]
