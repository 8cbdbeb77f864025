"""The client's device identity: an Ed25519 key kept at ``<state dir>/identity/device.pem``.

The key is created on first use with mode 0600 (its directory 0700) and never overwritten; a key
file that other users can read is refused, like ssh refuses such a private key. Two processes
creating it at once end up with the same key: the file is written under a temporary name and
linked into place, and whoever loses the race loads the winner's key.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from clawline.errors import InvalidInput
from clawline.gateway.device import DeviceAuthError, DeviceIdentity

DEVICE_KEY_FILE = Path("identity") / "device.pem"


class DeviceKeyError(InvalidInput):
    """The device key file cannot be used."""


def device_key_path(state_dir: Path) -> Path:
    return state_dir / DEVICE_KEY_FILE


def _load(path: Path) -> DeviceIdentity:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise DeviceKeyError(
            f"device key {path} is accessible by other users (mode {mode:04o}); "
            f"run: chmod 600 {path}"
        )
    try:
        return DeviceIdentity.from_pem(path.read_bytes())
    except (ValueError, TypeError, DeviceAuthError):
        raise DeviceKeyError(f"device key {path} is not an Ed25519 private key (PEM)") from None


def load_or_create_identity(state_dir: Path) -> DeviceIdentity:
    """The device identity of this state directory, created on first use."""
    path = device_key_path(state_dir)
    if path.exists():
        return _load(path)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    identity = DeviceIdentity.generate()
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(identity.to_pem())
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            return _load(path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    return identity
