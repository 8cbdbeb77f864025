"""File tools confined to the agent's workspace: ``read_file``, ``write_file``, ``list_files``.

Every access goes through :class:`clawline.agents.confined.ConfinedDir`: the workspace is
opened without following a symlink, and a path below it is walked one component at a time
from descriptors already held, so no swap of a directory for a symlink can redirect it. Paths
are relative, without ``..``, NUL or empty components; a symlink inside the workspace is
followed (resolved by the walk, not the kernel) and one leading outside it is refused. Files
with more than one hard link are refused unless ``[tools.fs] allowHardlinks = true``. A write
replaces the file atomically (a new file renamed over the old one); an append writes in place.
Sizes are bounded: a read returns at most :data:`MAX_READ_BYTES` (more with ``offset``), a
write takes at most :data:`MAX_WRITE_BYTES`, a listing at most :data:`MAX_LIST_ENTRIES`
entries. Blocking file work runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator, Mapping
from typing import BinaryIO

from clawline.agents.confined import (
    ConfinedDir,
    ConfinedPathError,
    Entry,
    NotRegularFile,
    split_path,
)
from clawline.agents.tools.base import Tool, ToolContext, ToolResult, ToolSpec
from clawline.config import FsToolsConfig
from clawline.errors import InvalidInput
from clawline.types import JSON, JSONObject

MAX_READ_BYTES = 1024 * 1024
MAX_WRITE_BYTES = 5 * 1024 * 1024
MAX_LIST_ENTRIES = 1000
_CHUNK = 64 * 1024

_PATH = {"type": "string", "description": "A path relative to the workspace."}


class _Refused(InvalidInput):
    """A refusal the model should read (becomes an error result)."""


def _path(args: Mapping[str, JSON], *, listing: bool = False) -> str:
    """The ``path`` argument, stripped and checked (relative, no ``..``, NUL or empty
    components); a listing's default is the workspace itself."""
    raw = args.get("path")
    if raw is None and listing:
        raw = ""
    text = raw.strip() if isinstance(raw, str) else raw
    split_path(text, allow_root=listing)
    assert isinstance(text, str)
    return text


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


def _read(root: ConfinedDir, args: Mapping[str, JSON]) -> JSONObject:
    raw = _path(args)
    offset = _positive_int(args, "offset") or 1
    limit = _positive_int(args, "limit")
    try:
        handle, path = root.open_file(raw)
    except (FileNotFoundError, NotADirectoryError):
        raise _Refused(f"file not found: {raw}") from None
    except NotRegularFile:
        raise _Refused(f"not a file: {raw}") from None
    line, taken, chunks, used, truncated = 1, 0, [], 0, False
    with handle:
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
        "path": path,
        "content": b"".join(chunks).decode("utf-8", errors="replace"),
        "offset": offset,
        "size": size,
        "truncated": truncated,
    }
    if truncated:
        result["note"] = f"output cut at {MAX_READ_BYTES} bytes; continue with offset={line}"
    return result


def _write(root: ConfinedDir, args: Mapping[str, JSON]) -> JSONObject:
    content = args.get("content")
    if not isinstance(content, str):
        raise _Refused("content must be a string")
    append = args.get("append", False)
    if not isinstance(append, bool):
        raise _Refused("append must be true or false")
    data = content.encode("utf-8")
    if len(data) > MAX_WRITE_BYTES:
        raise _Refused(f"content too large: {len(data)} bytes (max {MAX_WRITE_BYTES})")
    raw = _path(args)
    try:
        path = root.append(raw, data) if append else root.replace(raw, data)
    except NotRegularFile as error:
        if error.is_directory:
            raise _Refused(f"is a directory: {raw}") from None
        raise
    return {"status": "ok", "path": path, "bytes": len(data), "appended": append}


def _entry(prefix: str, entry: Entry) -> JSONObject:
    out: JSONObject = {"path": f"{prefix}{entry.name}", "type": entry.kind}
    if entry.kind == "file":
        out["size"] = entry.size
    return out


def _list(root: ConfinedDir, args: Mapping[str, JSON]) -> JSONObject:
    raw = _path(args, listing=True)
    recursive = args.get("recursive", False)
    if not isinstance(recursive, bool):
        raise _Refused("recursive must be true or false")
    try:
        path, listing = root.entries(raw)
    except FileNotFoundError:
        raise _Refused(f"directory not found: {raw}") from None
    except NotADirectoryError:
        raise _Refused(f"not a directory: {raw}") from None
    entries: list[JSON] = []
    pending: list[str] = []
    directory, truncated = path, False
    while True:
        prefix = "" if directory == "." else f"{directory}/"
        for item in sorted(listing, key=lambda entry: entry.name):
            if len(entries) >= MAX_LIST_ENTRIES:
                truncated = True
                break
            entries.append(_entry(prefix, item))
            if recursive and item.kind == "dir":
                pending.append(prefix + item.name)
        if truncated or not pending:
            break
        directory = pending.pop(0)
        try:
            _, listing = root.entries(directory)
        except (ConfinedPathError, OSError):
            listing = []  # changed since it was listed: left out
    return {"status": "ok", "path": path, "entries": entries, "truncated": truncated}


class _FileTool:
    """A file tool under ``[tools.fs]`` (``fs``)."""

    spec: ToolSpec
    _work: Callable[[ConfinedDir, Mapping[str, JSON]], JSONObject]

    def __init__(self, *, fs: FsToolsConfig) -> None:
        self._fs = fs

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        allow_hardlinks = self._fs.allow_hardlinks

        def work() -> JSONObject:
            with ConfinedDir.open(
                ctx.workspace,
                create=True,
                symlinks="within",
                allow_hardlinks=allow_hardlinks,
            ) as root:
                return type(self)._work(root, args)

        try:
            return ToolResult(await asyncio.to_thread(work))
        except (ConfinedPathError, _Refused) as error:
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


def file_tools(*, fs: FsToolsConfig) -> list[Tool]:
    """``read_file``, ``write_file`` and ``list_files`` under ``[tools.fs]``."""
    return [ReadFileTool(fs=fs), WriteFileTool(fs=fs), ListFilesTool(fs=fs)]
