"""``sessions_spawn`` attachments (OpenClaw's limits and texts): files handed to a subagent.

Disabled unless configured (:class:`~clawline.config.AttachmentLimits`, parsed with the rest of
the configuration)::

    [tools.sessions_spawn.attachments]
    enabled = true
    maxFiles = 50              # 1..50
    maxFileBytes = 1048576     # 1 MiB
    maxTotalBytes = 5242880    # 5 MiB

:func:`prepare_attachments` decodes and checks them before the child exists (names must be
plain file names: no directories, ``..``, NUL or leading dots); :func:`write_attachments` writes
them into ``.attachments/<child id>/`` of the child's workspace once it does. The result
reports ``{count, totalBytes, files:[{name, bytes, sha256}], relDir}``.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import errno
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from clawline.agents.confined import ConfinedDir, ConfinedPathError
from clawline.collab.spawn_args import RawAttachment
from clawline.config import AttachmentLimits
from clawline.errors import InvalidInput
from clawline.types import JSONObject

ATTACHMENTS_DISABLED = (
    "attachments are disabled for sessions_spawn (enable tools.sessions_spawn.attachments.enabled)"
)
ATTACHMENTS_DIR = ".attachments"


class AttachmentRefused(InvalidInput):
    """The attachments break a limit; ``str(error)`` is the result's error text."""


@dataclass(frozen=True, slots=True)
class _File:
    name: str
    data: bytes
    sha256: str


@dataclass(frozen=True, slots=True)
class PreparedAttachments:
    files: tuple[_File, ...]

    @property
    def total_bytes(self) -> int:
        return sum(len(item.data) for item in self.files)

    def report(self, rel_dir: str) -> JSONObject:
        return {
            "count": len(self.files),
            "totalBytes": self.total_bytes,
            "files": [
                {"name": item.name, "bytes": len(item.data), "sha256": item.sha256}
                for item in self.files
            ],
            "relDir": rel_dir,
        }


def _check_name(name: str) -> str:
    if (
        "/" in name
        or "\\" in name
        or "\x00" in name
        or name.startswith(".")
        or len(name.encode()) > 255
    ):
        raise AttachmentRefused(f"attachments_invalid_name ({name})")
    return name


def _decode(item: RawAttachment) -> bytes:
    if item.encoding == "utf8":
        return item.content.encode()
    try:
        return base64.b64decode(item.content, validate=True)
    except (binascii.Error, ValueError):
        raise AttachmentRefused(f"attachments_invalid_base64 ({item.name})") from None


def prepare_attachments(
    raw: Sequence[RawAttachment], limits: AttachmentLimits
) -> PreparedAttachments:
    if not limits.enabled:
        raise AttachmentRefused(ATTACHMENTS_DISABLED)
    if len(raw) > limits.max_files:
        raise AttachmentRefused(f"attachments_file_count_exceeded (maxFiles={limits.max_files})")
    files: list[_File] = []
    seen: set[str] = set()
    total = 0
    for item in raw:
        name = _check_name(item.name)
        if name in seen:
            raise AttachmentRefused(f"attachments_duplicate_name ({name})")
        seen.add(name)
        data = _decode(item)
        if len(data) > limits.max_file_bytes:
            raise AttachmentRefused(
                f"attachments_file_bytes_exceeded (name={name}, bytes={len(data)}, "
                f"maxFileBytes={limits.max_file_bytes})"
            )
        total += len(data)
        if total > limits.max_total_bytes:
            raise AttachmentRefused(
                f"attachments_total_bytes_exceeded (totalBytes>{limits.max_total_bytes}, "
                f"maxTotalBytes={limits.max_total_bytes})"
            )
        files.append(_File(name, data, hashlib.sha256(data).hexdigest()))
    return PreparedAttachments(tuple(files))


def attachments_rel_dir(child_session_key: str) -> str:
    return f"{ATTACHMENTS_DIR}/{child_session_key.rsplit(':', 1)[-1]}"


def write_attachments(workspace: Path, rel_dir: str, prepared: PreparedAttachments) -> None:
    """Write the files (blocking) into the real path ``workspace`` (created when missing);
    the directory must not exist yet. Nothing on the way is followed, and each file is
    created new (``O_EXCL``). Every failure is an ``OSError``: a symlink in the workspace
    path or in ``rel_dir`` is ``ELOOP`` with the confined walk's text."""
    try:
        with ConfinedDir.open(workspace, create=True) as root:
            root.make_new_dir(rel_dir, mode=0o700)
            for item in prepared.files:
                root.create(f"{rel_dir}/{item.name}", item.data, mode=0o600)
    except ConfinedPathError as error:
        raise OSError(errno.ELOOP, str(error)) from error


def remove_attachments(workspace: Path, rel_dir: str) -> None:
    """Remove what :func:`write_attachments` wrote (blocking; errors are ignored), never
    through a symlink."""
    with contextlib.suppress(ConfinedPathError, OSError), ConfinedDir.open(workspace) as root:
        root.remove_tree(rel_dir)
