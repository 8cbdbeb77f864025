"""``clawline devices …``: list, approve and revoke the device pairings of a ``require_device``
gateway.

Always through the store (``--store-url`` / ``CLAWLINE_STORE_URL``, else the state directory's
SQLite file), never a gateway: whoever can open the store is the operator, and every gateway on
that store sees the change (open connections of a revoked device are closed within the
gateway's ``pairing_check_interval_s``, 2 s by default). See docs/security.md, "Device pairing".
"""

from __future__ import annotations

import click

from clawline.cli.fitted_table import Column, print_table
from clawline.cli.render import ago, dump_json, make_console, printable
from clawline.cli.root import CliState, InputRefused, pass_state
from clawline.pairing.registry import PairingRegistry
from clawline.records.pairing import PENDING, DevicePairing
from clawline.types import JSON

DEVICE_COLUMNS = (
    Column("DEVICE"),
    Column("STATUS"),
    Column("CLIENT", squeeze=3),
    Column("REQUESTED", fold=1),
    Column("GRANTED", squeeze=2),
    Column("SINCE"),
)
"""When too wide: fold ``REQUESTED``, then cut ``GRANTED``, then ``CLIENT``."""
DEVICE_ID_SHOWN = 16
"""Hex digits of the id the table shows (any unique prefix of 6 or more names a device)."""
_NONE = "-"


def _registry(state: CliState) -> PairingRegistry:
    return PairingRegistry(store=state.open_store(), clock=state.clock)


def _scopes(text: str | None) -> list[str] | None:
    """``--scopes`` split at commas and spaces; the registry checks the names."""
    if text is None:
        return None
    return [part for part in text.replace(",", " ").split() if part]


def _client(pairing: DevicePairing) -> str:
    return printable(f"{pairing.client_id} ({pairing.client_mode}) on {pairing.platform}")


def _joined(scopes: tuple[str, ...]) -> str:
    return ",".join(scopes) or _NONE


@click.group()
def devices() -> None:
    """Pair, list and revoke the device identities a require_device gateway admits."""


@devices.command("list")
@click.option(
    "--format", "output", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@pass_state
def list_devices(state: CliState, output: str) -> None:
    """List pending requests (newest first), paired and revoked devices."""
    rows = _registry(state).list()
    if output == "json":
        listed: list[JSON] = [row.to_json() for row in rows]
        click.echo(dump_json({"devices": listed, "count": len(listed)}))
        return
    console = make_console()
    if not rows:
        console.print("no devices")
        return
    now = state.clock.now_ms()
    cells = [
        (
            row.device_id[:DEVICE_ID_SHOWN],
            row.status,
            _client(row),
            _joined(row.requested_scopes),
            _NONE if row.status == PENDING else _joined(row.granted_scopes),
            ago(row.updated_at, now),
        )
        for row in rows
    ]
    print_table(console, DEVICE_COLUMNS, cells)


@devices.command("approve")
@click.argument("code", required=False)
@click.option(
    "--device",
    "device",
    metavar="ID",
    help="Approve this pending device (id or unique prefix) instead of giving its code; "
    "for a paired device, change its grant.",
)
@click.option(
    "--scopes",
    metavar="LIST",
    help="Grant only these scopes (comma-separated; default: what the device asked for).",
)
@pass_state
def approve_device(
    state: CliState, code: str | None, device: str | None, scopes: str | None
) -> None:
    """Pair the device whose request printed CODE (e.g. 7QX-4KD) on the gateway's output."""
    if (code is None) == (device is None):
        raise InputRefused("give the pairing code the gateway printed, or --device ID")
    registry = _registry(state)
    if code is not None:
        paired = registry.approve_code(code, _scopes(scopes))
    else:
        assert device is not None
        paired = registry.approve_device(device, _scopes(scopes))
    click.echo(
        f"paired device {paired.device_id} ({_client(paired)}) "
        f"with {_joined(paired.granted_scopes)}"
    )


@devices.command("revoke")
@click.argument("device", metavar="ID")
@pass_state
def revoke_device(state: CliState, device: str) -> None:
    """Revoke a device (id or unique prefix): refused from now on, open connections closed."""
    revocation = _registry(state).revoke(device)
    device_id = revocation.pairing.device_id
    if revocation.changed:
        click.echo(f"revoked device {device_id}")
    else:
        click.echo(f"device {device_id} was already revoked")
