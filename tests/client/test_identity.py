"""The device key file: created once with tight permissions, reused, refused when unsafe."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest

from clawline.client import DeviceIdentity, device_key_path, load_or_create_identity
from clawline.errors import InvalidInput


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_created_on_first_use_with_owner_only_permissions(tmp_path: Path) -> None:
    state = tmp_path / "state"
    identity = load_or_create_identity(state)
    path = device_key_path(state)
    assert path == state / "identity" / "device.pem"
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert len(identity.device_id) == 64
    assert [p.name for p in path.parent.iterdir()] == ["device.pem"]  # no temporary left


def test_the_same_key_is_loaded_again(tmp_path: Path) -> None:
    first = load_or_create_identity(tmp_path)
    second = load_or_create_identity(tmp_path)
    assert first.device_id == second.device_id
    assert second.sign("x") == first.sign("x")  # Ed25519 signatures are deterministic


def test_concurrent_first_use_agrees_on_one_key(tmp_path: Path) -> None:
    ids: list[str] = []
    barrier = threading.Barrier(8)

    def load() -> None:
        barrier.wait()
        ids.append(load_or_create_identity(tmp_path).device_id)

    threads = [threading.Thread(target=load) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(ids) == 8
    assert set(ids) == {load_or_create_identity(tmp_path).device_id}


def test_a_key_readable_by_others_is_refused(tmp_path: Path) -> None:
    load_or_create_identity(tmp_path)
    path = device_key_path(tmp_path)
    path.chmod(0o644)
    with pytest.raises(InvalidInput) as caught:
        load_or_create_identity(tmp_path)
    assert str(caught.value) == (
        f"device key {path} is accessible by other users (mode 0644); run: chmod 600 {path}"
    )


def test_a_file_that_is_not_a_key_is_refused(tmp_path: Path) -> None:
    path = device_key_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a key")
    path.chmod(0o600)
    with pytest.raises(InvalidInput, match="is not an Ed25519 private key"):
        load_or_create_identity(tmp_path)
    assert path.read_bytes() == b"not a key"  # never overwritten


def test_an_existing_key_is_used_as_is(tmp_path: Path) -> None:
    identity = DeviceIdentity.generate()
    path = device_key_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(identity.to_pem())
    path.chmod(0o600)
    assert load_or_create_identity(tmp_path).device_id == identity.device_id
