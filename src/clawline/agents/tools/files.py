"""File tools confined to the agent's workspace: ``read_file``, ``write_file``, ``list_files``.

Every path goes through :func:`clawline.agents.workspace.resolve_in_workspace` (relative only,
no ``..``, no NUL, no symlink leading outside); files are opened with ``O_NOFOLLOW``. Sizes
are bounded: a read returns at most :data:`MAX_READ_BYTES` (more with ``offset``), a write
takes at most :data:`MAX_WRITE_BYTES`, a listing at most :data:`MAX_LIST_ENTRIES` entries.
Blocking file work runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from clawline.agents.tools.base import Tool, ToolContext, ToolResult, ToolSpec
from clawline.agents.workspace import WorkspaceError, ensure_workspace, resolve_in_workspace
from clawline.types import JSON, JSONObject

__all__ = [
    "MAX_LIST_ENTRIES",
    "MAX_READ_BYTES",
    "MAX_WRITE_BYTES",
    "ListFilesTool",
    "ReadFileTool",
    "WriteFileTool",
    "file_tools",
]

MAX_READ_BYTES = 1024 * 1024
MAX_WRITE_BYTES = 5 * 1024 * 1024
MAX_LIST_ENTRIES = 1000
_CHUNK = 64 * 1024

_PATH = {"type": "string", "description": "A path relative to the workspace."}


class _Refused(Exception):
    """A refusal the model should read (becomes an error result)."""


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() or "."


def _positive_int(args: Mapping[str, JSON], name: str) -> int | None:
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Refused(f"{name} must be an integer >= 1")
    return value


def _pieces(handle: BinaryIO) -> Iterator[bytes]:
    """Lines of at most :data:`_CHUNK` bytes (a longer line comes in several pieces)."""
    while piece := handle.readline(_CHUNK):
        yield piece


def _read(root: Path, args: Mapping[str, JSON]) -> JSONObject:
    path = resolve_in_workspace(root, args.get("path"))
    offset = _positive_int(args, "offset") or 1
    limit = _positive_int(args, "limit")
    if not path.exists():
        raise _Refused(f"file not found: {args.get('path')}")
    if not path.is_file():
        raise _Refused(f"not a file: {args.get('path')}")
    line, taken, chunks, used, truncated = 1, 0, [], 0, False
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
        for piece in _pieces(handle):
            if line >= offset:
                if limit is not None and taken >= limit:
                    break
                if used + len(piece) > MAX_READ_BYTES:
                    chunks.append(piece[: MAX_READ_BYTES - used])
                    truncated = True
                    break
                chunks.append(piece)
                used += len(piece)
            if piece.endswith(b"\n"):
                taken += line >= offset
                line += 1
        size = os.fstat(handle.fileno()).st_size
    result: JSONObject = {
        "status": "ok",
        "path": _relative(root, path),
        "content": b"".join(chunks).decode("utf-8", errors="replace"),
        "offset": offset,
        "size": size,
        "truncated": truncated,
    }
    if truncated:
        result["note"] = f"output cut at {MAX_READ_BYTES} bytes; continue with offset={line}"
    return result


def _write(root: Path, args: Mapping[str, JSON]) -> JSONObject:
    content = args.get("content")
    if not isinstance(content, str):
        raise _Refused("content must be a string")
    append = args.get("append", False)
    if not isinstance(append, bool):
        raise _Refused("append must be true or false")
    data = content.encode("utf-8")
    if len(data) > MAX_WRITE_BYTES:
        raise _Refused(f"content too large: {len(data)} bytes (max {MAX_WRITE_BYTES})")
    path = resolve_in_workspace(root, args.get("path"))
    if path.is_dir():
        raise _Refused(f"is a directory: {args.get('path')}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if not Path(os.path.realpath(path.parent)).is_relative_to(root):
        raise WorkspaceError(f"path resolves outside the workspace: {args.get('path')}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if append else os.O_TRUNC)
    with os.fdopen(os.open(path, flags, 0o644), "wb") as handle:
        handle.write(data)
    return {"status": "ok", "path": _relative(root, path), "bytes": len(data), "appended": append}


def _entry(root: Path, entry: os.DirEntry[str]) -> JSONObject:
    out: JSONObject = {"path": _relative(root, Path(entry.path))}
    if entry.is_symlink():
        out["type"] = "symlink"
    elif entry.is_dir(follow_symlinks=False):
        out["type"] = "dir"
    elif entry.is_file(follow_symlinks=False):
        out["type"] = "file"
        out["size"] = entry.stat(follow_symlinks=False).st_size
    else:
        out["type"] = "other"
    return out


def _list(root: Path, args: Mapping[str, JSON]) -> JSONObject:
    raw = args.get("path")
    path = resolve_in_workspace(root, "" if raw is None else raw, allow_root=True)
    recursive = args.get("recursive", False)
    if not isinstance(recursive, bool):
        raise _Refused("recursive must be true or false")
    if not path.exists():
        raise _Refused(f"directory not found: {args.get('path')}")
    if not path.is_dir():
        raise _Refused(f"not a directory: {args.get('path')}")
    entries: list[JSON] = []
    pending = [path]
    truncated = False
    while pending and not truncated:
        with os.scandir(pending.pop(0)) as listing:
            found = sorted(listing, key=lambda item: item.name)
        for item in found:
            if len(entries) >= MAX_LIST_ENTRIES:
                truncated = True
                break
            entries.append(_entry(root, item))
            if recursive and item.is_dir(follow_symlinks=False):
                pending.append(Path(item.path))
    return {
        "status": "ok",
        "path": _relative(root, path),
        "entries": entries,
        "truncated": truncated,
    }


class _FileTool:
    spec: ToolSpec
    _work: Callable[[Path, Mapping[str, JSON]], JSONObject]

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        def work() -> JSONObject:
            return type(self)._work(ensure_workspace(ctx.workspace), args)

        try:
            return ToolResult(await asyncio.to_thread(work))
        except (WorkspaceError, _Refused) as error:
            return ToolResult.error(str(error))
        except OSError as error:
            return ToolResult.error(f"{self.spec.name}: {error.strerror or error}")


class ReadFileTool(_FileTool):
    spec = ToolSpec(
        name="read_file",
        description=(
            "Read a text file of your workspace. offset: first line (1-based); limit: number "
            f"of lines. At most {MAX_READ_BYTES} bytes are returned per call."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": _PATH,
                "offset": {"type": "integer", "minimum": 1},
                "limit": {"type": "integer", "minimum": 1},
            },
            "required": ["path"],
        },
    )
    _work = staticmethod(_read)


class WriteFileTool(_FileTool):
    spec = ToolSpec(
        name="write_file",
        description=(
            "Write (or with append=true, append to) a text file of your workspace; parent "
            f"directories are created. At most {MAX_WRITE_BYTES} bytes per call."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": _PATH,
                "content": {"type": "string"},
                "append": {"type": "boolean"},
            },
            "required": ["path", "content"],
        },
    )
    _work = staticmethod(_write)


class ListFilesTool(_FileTool):
    spec = ToolSpec(
        name="list_files",
        description=(
            "List a directory of your workspace (default: its top). recursive=true descends "
            f"into subdirectories; at most {MAX_LIST_ENTRIES} entries."
        ),
        parameters={
            "type": "object",
            "properties": {"path": _PATH, "recursive": {"type": "boolean"}},
        },
    )
    _work = staticmethod(_list)


def file_tools() -> list[Tool]:
    return [ReadFileTool(), WriteFileTool(), ListFilesTool()]
