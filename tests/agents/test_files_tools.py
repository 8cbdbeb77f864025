"""File tools: confined to the workspace, bounded in size."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

from clawline.agents.confined import ConfinedDir, PathSyntaxError
from clawline.agents.tools.base import ToolContext, ToolResult
from clawline.agents.tools.files import (
    MAX_LIST_ENTRIES,
    MAX_READ_BYTES,
    MAX_WRITE_BYTES,
    ListFilesTool,
    ReadFileTool,
    WriteFileTool,
)
from clawline.agents.workspace import workspace_for
from clawline.config import AgentsConfig, FsToolsConfig, Settings
from clawline.records.session import SessionEntry
from clawline.runtime import Runtime
from clawline.types import JSON

DEFAULT_FS = FsToolsConfig()
"""``[tools.fs]`` as configured by default (hard links refused)."""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with an outside directory and symlinks pointing out of it and within it."""
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    (root / "sub" / "inner.txt").write_text("inner")
    os.symlink(outside, root / "link_out")
    os.symlink(outside / "secret.txt", root / "file_link")
    os.symlink(root / "sub", root / "sub_link")
    return root


@pytest.fixture
def ctx(services: Runtime, ws: Path) -> ToolContext:
    return ToolContext(
        host=services.tool_host,
        session_key="agent:main:main",
        agent_id="main",
        run_id="r",
        workspace=ws,
    )


def details(result: ToolResult) -> dict[str, Any]:
    assert isinstance(result.details, dict)
    return dict(result.details)


async def call(tool: Any, ctx: ToolContext, **args: JSON) -> dict[str, Any]:
    result: ToolResult = await tool.invoke(ctx, args)
    out = details(result)
    assert result.is_error == (out["status"] != "ok"), out
    return out


def snapshot(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


ESCAPES: list[tuple[object, str]] = [
    ("/etc/passwd", "path must be relative to the workspace: /etc/passwd"),
    ("../outside/secret.txt", "path must not contain '..': ../outside/secret.txt"),
    ("sub/../../outside/secret.txt", "must not contain '..'"),
    ("sub/../inner.txt", "must not contain '..'"),
    ("..\\outside\\secret.txt", "must not contain '..'"),
    ("\\outside", "must be relative"),
    ("C:\\outside", "must be relative"),
    ("link_out/secret.txt", "path resolves outside the workspace: link_out/secret.txt"),
    ("link_out", "path resolves outside the workspace: link_out"),
    ("file_link", "path resolves outside the workspace: file_link"),
    ("a\x00b", "path must not contain NUL characters"),
    (5, "path must be a string"),
]


@pytest.mark.parametrize(("path", "message"), ESCAPES)
async def test_every_escape_is_refused_by_every_tool(
    ctx: ToolContext, tmp_path: Path, path: JSON, message: str
) -> None:
    before = snapshot(tmp_path / "outside")
    read = await call(ReadFileTool(fs=DEFAULT_FS), ctx, path=path)
    write = await call(WriteFileTool(fs=DEFAULT_FS), ctx, path=path, content="pwned")
    append = await call(WriteFileTool(fs=DEFAULT_FS), ctx, path=path, content="pwned", append=True)
    listing = await call(ListFilesTool(fs=DEFAULT_FS), ctx, path=path)
    for out in (read, write, append, listing):
        assert out["status"] == "error"
        assert message in out["error"]
    assert snapshot(tmp_path / "outside") == before
    assert not (tmp_path / "pwned").exists()


async def test_writing_through_a_symlinked_directory_creates_nothing_outside(
    ctx: ToolContext, tmp_path: Path
) -> None:
    out = await call(WriteFileTool(fs=DEFAULT_FS), ctx, path="link_out/deep/new.txt", content="x")
    assert out["error"] == "path resolves outside the workspace: link_out/deep/new.txt"
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["secret.txt"]


async def test_empty_and_root_paths_name_no_file(ctx: ToolContext) -> None:
    for path in ("", ".", " "):
        out = await call(ReadFileTool(fs=DEFAULT_FS), ctx, path=path)
        assert out["error"] == "path must name a file inside the workspace"


def test_resolve_keeps_symlinks_that_stay_inside(ws: Path) -> None:
    with ConfinedDir.open(ws, symlinks="within") as root:
        handle, path = root.open_file("sub_link/inner.txt")
        with handle:
            assert (path, handle.read()) == ("sub/inner.txt", b"inner")
        assert root.entries("")[0] == "."
        assert root.replace("a:b.txt", b"x") == "a:b.txt"  # only drive letters are refused
        with pytest.raises(PathSyntaxError):
            root.open_file("")
    assert (ws / "a:b.txt").read_bytes() == b"x"


async def test_write_read_append_and_nested_directories(ctx: ToolContext, ws: Path) -> None:
    out = await call(WriteFileTool(fs=DEFAULT_FS), ctx, path="notes/today/a.txt", content="one\n")
    assert out == {"status": "ok", "path": "notes/today/a.txt", "bytes": 4, "appended": False}
    await call(
        WriteFileTool(fs=DEFAULT_FS), ctx, path="notes/today/a.txt", content="two\n", append=True
    )
    assert (ws / "notes" / "today" / "a.txt").read_text() == "one\ntwo\n"
    read = await call(ReadFileTool(fs=DEFAULT_FS), ctx, path="notes/today/a.txt")
    assert (read["content"], read["size"], read["truncated"]) == ("one\ntwo\n", 8, False)
    via_link = await call(ReadFileTool(fs=DEFAULT_FS), ctx, path="sub_link/inner.txt")
    assert (via_link["content"], via_link["path"]) == ("inner", "sub/inner.txt")
    replaced = await call(
        WriteFileTool(fs=DEFAULT_FS), ctx, path="notes/today/a.txt", content="new"
    )
    assert replaced["bytes"] == 3
    assert (ws / "notes" / "today" / "a.txt").read_text() == "new"


async def test_read_offset_and_limit_count_lines(ctx: ToolContext, ws: Path) -> None:
    (ws / "lines.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    out = await call(ReadFileTool(fs=DEFAULT_FS), ctx, path="lines.txt", offset=3, limit=2)
    assert (out["content"], out["offset"]) == ("line 3\nline 4\n", 3)
    tail = await call(ReadFileTool(fs=DEFAULT_FS), ctx, path="lines.txt", offset=10)
    assert tail["content"] == "line 10\n"
    past = await call(ReadFileTool(fs=DEFAULT_FS), ctx, path="lines.txt", offset=50)
    assert past["content"] == ""
    bad = await call(ReadFileTool(fs=DEFAULT_FS), ctx, path="lines.txt", offset=0)
    assert bad["error"] == "offset must be an integer >= 1"


async def test_reads_are_bounded_even_for_one_huge_line(ctx: ToolContext, ws: Path) -> None:
    (ws / "big.txt").write_bytes(b"x" * (MAX_READ_BYTES + 5000))
    out = await call(ReadFileTool(fs=DEFAULT_FS), ctx, path="big.txt")
    assert len(out["content"]) == MAX_READ_BYTES
    assert out["truncated"] is True
    assert out["size"] == MAX_READ_BYTES + 5000
    assert "output cut at" in out["note"]


async def test_writes_are_bounded(ctx: ToolContext, ws: Path) -> None:
    out = await call(
        WriteFileTool(fs=DEFAULT_FS), ctx, path="big.txt", content="y" * (MAX_WRITE_BYTES + 1)
    )
    assert out["error"] == (
        f"content too large: {MAX_WRITE_BYTES + 1} bytes (max {MAX_WRITE_BYTES})"
    )
    assert not (ws / "big.txt").exists()


async def test_bad_arguments_and_missing_files_are_error_results(
    ctx: ToolContext, ws: Path
) -> None:
    assert (await call(ReadFileTool(fs=DEFAULT_FS), ctx, path="nope.txt"))[
        "error"
    ] == "file not found: nope.txt"
    assert (await call(ReadFileTool(fs=DEFAULT_FS), ctx, path="sub"))["error"] == "not a file: sub"
    wrote_dir = await call(WriteFileTool(fs=DEFAULT_FS), ctx, path="sub", content="x")
    assert wrote_dir["error"] == "is a directory: sub"
    no_content = await call(WriteFileTool(fs=DEFAULT_FS), ctx, path="a.txt")
    assert no_content["error"] == "content must be a string"
    bad_append = await call(
        WriteFileTool(fs=DEFAULT_FS), ctx, path="a.txt", content="x", append="yes"
    )
    assert bad_append["error"] == "append must be true or false"
    missing_dir = await call(ListFilesTool(fs=DEFAULT_FS), ctx, path="nowhere")
    assert missing_dir["error"] == "directory not found: nowhere"
    not_dir = await call(ListFilesTool(fs=DEFAULT_FS), ctx, path="sub/inner.txt")
    assert not_dir["error"] == "not a directory: sub/inner.txt"


async def test_listing_shows_symlinks_without_following_them(ctx: ToolContext) -> None:
    top = await call(ListFilesTool(fs=DEFAULT_FS), ctx)
    assert top["path"] == "."
    assert [(e["path"], e["type"]) for e in top["entries"]] == [
        ("file_link", "symlink"),
        ("link_out", "symlink"),
        ("sub", "dir"),
        ("sub_link", "symlink"),
    ]
    deep = await call(ListFilesTool(fs=DEFAULT_FS), ctx, recursive=True)
    paths = [e["path"] for e in deep["entries"]]
    assert "sub/inner.txt" in paths
    assert not any(p.startswith(("link_out/", "sub_link/")) for p in paths)
    inner = next(e for e in deep["entries"] if e["path"] == "sub/inner.txt")
    assert inner == {"path": "sub/inner.txt", "type": "file", "size": 5}


async def test_listings_are_bounded(ctx: ToolContext, ws: Path) -> None:
    many = ws / "many"
    many.mkdir()
    for n in range(MAX_LIST_ENTRIES + 3):
        (many / f"f{n:05d}").touch()
    out = await call(ListFilesTool(fs=DEFAULT_FS), ctx, path="many")
    assert len(out["entries"]) == MAX_LIST_ENTRIES
    assert out["truncated"] is True


def test_a_child_works_in_the_workspace_its_entry_records(tmp_path: Path) -> None:
    agent = AgentsConfig(state_dir=tmp_path).resolve_agent("main")
    child = SessionEntry(
        key="agent:main:subagent:x",
        session_id="s",
        created_at=0,
        updated_at=0,
        root_session_key="agent:main:main",
        trace_id="t",
        lineage_path=("agent:main:main", "agent:main:subagent:x"),
        spawned_workspace_dir=str(tmp_path / "workspace" / "main" / "shared"),
    )
    assert workspace_for(agent, child) == tmp_path / "workspace" / "main" / "shared"
    assert workspace_for(agent, None) == tmp_path / "workspace" / "main"
    relative = dataclasses.replace(child, spawned_workspace_dir="elsewhere")
    assert workspace_for(agent, relative) == tmp_path / "workspace" / "main"


def test_a_recorded_workspace_outside_the_agents_own_is_not_used(tmp_path: Path) -> None:
    agent = AgentsConfig(state_dir=tmp_path).resolve_agent("main")
    (tmp_path / "workspace" / "main").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "workspace" / "main" / "link").symlink_to(tmp_path / "elsewhere")
    child = SessionEntry(
        key="agent:main:subagent:x",
        session_id="s",
        created_at=0,
        updated_at=0,
        root_session_key="agent:main:main",
        trace_id="t",
        lineage_path=("agent:main:main", "agent:main:subagent:x"),
        spawned_workspace_dir="/etc",
    )
    assert workspace_for(agent, child) == tmp_path / "workspace" / "main"
    escaping = dataclasses.replace(
        child, spawned_workspace_dir=str(tmp_path / "workspace" / "main" / "link")
    )
    assert workspace_for(agent, escaping) == tmp_path / "workspace" / "main"


async def test_the_workspace_is_created_on_first_use(services: Runtime, tmp_path: Path) -> None:
    fresh = tmp_path / "not" / "yet"
    ctx = ToolContext(
        host=services.tool_host,
        session_key="agent:a:main",
        agent_id="a",
        run_id="r",
        workspace=fresh,
    )
    out = await call(WriteFileTool(fs=DEFAULT_FS), ctx, path="hello.txt", content="hi")
    assert out["status"] == "ok"
    assert (fresh / "hello.txt").read_text() == "hi"
    assert fresh.stat().st_mode & 0o777 == 0o700


async def test_hard_links_are_refused_by_every_file_tool(
    ctx: ToolContext, ws: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    os.link(secret, ws / "hard.txt")
    read = await call(ReadFileTool(fs=DEFAULT_FS), ctx, path="hard.txt")
    write = await call(WriteFileTool(fs=DEFAULT_FS), ctx, path="hard.txt", content="pwned")
    append = await call(
        WriteFileTool(fs=DEFAULT_FS), ctx, path="hard.txt", content="pwned", append=True
    )
    for out in (read, write, append):
        assert out == {"status": "error", "error": "file has more than one hard link: hard.txt"}
    assert secret.read_text() == "top secret"
    assert (ws / "hard.txt").stat().st_nlink == 2


async def test_hard_links_are_allowed_when_configured(tmp_path: Path, ws: Path) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    os.link(secret, ws / "hard.txt")
    raw: dict[str, Any] = {"tools": {"fs": {"allowHardlinks": True}}}
    services = Runtime.open(Settings(state_dir=tmp_path / "state", raw=raw))
    try:
        ctx = ToolContext(
            host=services.tool_host,
            session_key="agent:main:main",
            agent_id="main",
            run_id="r",
            workspace=ws,
        )
        read_tool, write_tool = (
            services.runs.tools.get("read_file"),
            services.runs.tools.get("write_file"),
        )
        read = await call(read_tool, ctx, path="hard.txt")
        assert read["content"] == "top secret"
        await call(write_tool, ctx, path="hard.txt", content="+", append=True)
        assert secret.read_text() == "top secret+"  # an append writes in place, through the link
        await call(write_tool, ctx, path="hard.txt", content="new")
    finally:
        await services.runs.shutdown()
        services.close()
    assert (ws / "hard.txt").read_text() == "new"  # a write replaces the name, not the file
    assert secret.read_text() == "top secret+"


async def test_a_link_out_deep_in_the_path_is_refused(ctx: ToolContext, ws: Path) -> None:
    os.symlink("../../outside", ws / "sub" / "deep_out")
    path = "sub/deep_out/secret.txt"
    for out in (
        await call(ReadFileTool(fs=DEFAULT_FS), ctx, path=path),
        await call(WriteFileTool(fs=DEFAULT_FS), ctx, path=path, content="pwned"),
        await call(ListFilesTool(fs=DEFAULT_FS), ctx, path="sub/deep_out"),
    ):
        assert out["error"].startswith("path resolves outside the workspace: sub/deep_out")
    assert (ws.parent / "outside" / "secret.txt").read_text() == "top secret"


async def test_empty_components_are_refused(ctx: ToolContext) -> None:
    out = await call(ReadFileTool(fs=DEFAULT_FS), ctx, path="sub//inner.txt")
    assert out["error"] == "path must not contain empty components: sub//inner.txt"


async def test_a_workspace_swapped_for_a_symlink_after_the_turn_started_is_refused(
    services: Runtime, tmp_path: Path
) -> None:
    shared = tmp_path / "agent" / "shared"
    shared.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    ctx = ToolContext(
        host=services.tool_host,
        session_key="agent:main:main",
        agent_id="main",
        run_id="r",
        workspace=shared,
    )
    shared.rmdir()
    shared.symlink_to(tmp_path / "elsewhere")
    out = await call(WriteFileTool(fs=DEFAULT_FS), ctx, path="x.txt", content="x")
    assert out["error"] == f"directory is reached through a symlink: {shared}"
    assert list((tmp_path / "elsewhere").iterdir()) == []
