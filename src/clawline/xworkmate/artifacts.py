"""One artifact's description (docs/xworkmate.md): content type, size, digest, signed reference,
and its content inlined as base64 when it is small enough.

Files are opened through :class:`~clawline.agents.confined.ConfinedDir` (no symlink followed
by the kernel on the way) and must be regular files with one hard link (unless
``[tools.fs] allowHardlinks``); the size and digest are those of the bytes actually read, so a
file that changes between the scan and the read is described as it was read.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from clawline.agents.confined import ConfinedDir
from clawline.types import JSONObject
from clawline.xworkmate.refs import ArtifactRef, sign_ref, workspace_root_hash
from clawline.xworkmate.scope import TaskScope

_OOXML = "application/vnd.openxmlformats-officedocument"
CONTENT_TYPES: dict[str, str] = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".log": "text/plain",
    ".json": "application/json",
    ".csv": "text/csv",
    ".html": "text/html",
    ".htm": "text/html",
    ".pdf": "application/pdf",
    ".pptx": f"{_OOXML}.presentationml.presentation",
    ".docx": f"{_OOXML}.wordprocessingml.document",
    ".xlsx": f"{_OOXML}.spreadsheetml.sheet",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".svg": "image/svg+xml",
    ".mp4": "video/mp4",
    ".mov": "video/quicktime",
    ".webm": "video/webm",
}
_CHUNK = 1024 * 1024
NOT_A_FILE = "relativePath must point to a file"


def content_type_for(relative_path: str) -> str:
    suffix = PurePosixPath(relative_path).suffix.lower()
    return CONTENT_TYPES.get(suffix, "application/octet-stream")


@dataclass(frozen=True, slots=True)
class FileRead:
    size: int
    sha256: str
    content: bytes | None
    """The bytes, when the file was no larger than the inline limit."""


def read_file(directory: ConfinedDir, relative: str, *, inline_limit: int | None) -> FileRead:
    """Digest (and, up to ``inline_limit`` bytes, content) of the regular file ``relative``
    beneath ``directory``. Raises what :meth:`ConfinedDir.open_file` raises: a symlink
    (:class:`~clawline.agents.confined.SymlinkRefused`), a hard link, not a regular file,
    ``OSError``."""
    handle, _ = directory.open_file(relative)
    digest = hashlib.sha256()
    kept: list[bytes] | None = [] if inline_limit is not None else None
    size = 0
    with handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
            if kept is not None:
                if inline_limit is not None and size > inline_limit:
                    kept = None
                else:
                    kept.append(chunk)
    return FileRead(size, digest.hexdigest(), b"".join(kept) if kept is not None else None)


def describe(
    *,
    root: Path,
    scope: TaskScope,
    relative_path: str,
    read: FileRead,
    secret: bytes,
    include_content: bool,
    warnings: list[str],
) -> JSONObject:
    """The artifact object of a file that was read, with its signed ``artifactRef``."""
    ref = ArtifactRef(
        workspace_root_hash=workspace_root_hash(root),
        session_scope=scope.session_scope,
        run_scope=scope.relative,
        artifact_scope=scope.relative,
        relative_path=relative_path,
        size_bytes=read.size,
        sha256=read.sha256,
    )
    artifact: JSONObject = {
        "relativePath": relative_path,
        "label": PurePosixPath(relative_path).name,
        "contentType": content_type_for(relative_path),
        "sizeBytes": read.size,
        "sha256": read.sha256,
        "artifactRef": sign_ref(ref, secret),
        "artifactScope": scope.relative,
        "scopeKind": "task",
    }
    if include_content:
        if read.content is not None:
            artifact["encoding"] = "base64"
            artifact["content"] = base64.b64encode(read.content).decode("ascii")
        else:
            warnings.append(f"{relative_path} exceeds maxInlineBytes and was not inlined")
    return artifact
