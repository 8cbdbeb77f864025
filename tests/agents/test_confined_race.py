"""Confined file access under attack: another process swaps a workspace directory for a
symlink to outside in a tight loop while this one reads and writes through it.

An escape is a read that returns the outside file's content or a write that lands outside
(the outside directory is checked afterwards). The swapper (``swapper.py``) trades the names of
``d`` (a real directory) and ``d_link`` (a symlink to ``outside``) atomically, so ``d`` is
either at any instant; the counts prove both were met.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clawline.agents.confined import ConfinedDir, SymlinkRefused, Symlinks
from clawline.agents.tools.base import ToolContext
from clawline.agents.tools.files import ReadFileTool, WriteFileTool
from clawline.runtime import Runtime
from tests.agents.swapper import Swapper, start_swapper

INSIDE = b"inside"
OUTSIDE = b"OUTSIDE"
DIRECT_ATTEMPTS = 50_000
"""Per symlink policy: 100,000 attempts in all through the confined API."""
TOOL_READS = 1_500
TOOL_WRITES = 500


@dataclass
class Arena:
    workspace: Path
    outside: Path


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    workspace = tmp_path / "ws"
    outside = tmp_path / "outside"
    (workspace / "d").mkdir(parents=True)
    outside.mkdir()
    (workspace / "d" / "f.txt").write_bytes(INSIDE)
    (outside / "f.txt").write_bytes(OUTSIDE)
    (workspace / "d_link").symlink_to(outside)
    return Arena(workspace, outside)


@pytest.fixture
def swapper(arena: Arena, tmp_path: Path) -> Iterator[Swapper]:
    running = start_swapper(arena.workspace, tmp_path / "stop")
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.stop()


def _outside_untouched(arena: Arena) -> None:
    assert sorted(p.name for p in arena.outside.iterdir()) == ["f.txt"]
    assert (arena.outside / "f.txt").read_bytes() == OUTSIDE


def _attempt(root: ConfinedDir, n: int) -> str:
    try:
        if n % 2 == 0:
            handle, _ = root.open_file("d/f.txt")
            with handle:
                data = handle.read()
            return "escaped" if data.startswith(OUTSIDE) else "read"
        if n % 4 == 1:
            root.replace(f"d/w{n % 16}.txt", b"w", parents=False, durable=False)
        else:
            root.append("d/f.txt", b"+", parents=False)
        return "wrote"
    except SymlinkRefused:
        return "refused"
    except OSError:
        return "changed"  # d was another thing between two steps of the walk


@pytest.mark.parametrize("policy", ["within", "refuse"])
def test_no_read_or_write_escapes_while_a_directory_is_swapped_for_a_symlink(
    arena: Arena, swapper: Swapper, policy: Symlinks
) -> None:
    outcomes: Counter[str] = Counter()
    with ConfinedDir.open(arena.workspace, symlinks=policy) as root:
        for n in range(DIRECT_ATTEMPTS):
            outcomes[_attempt(root, n)] += 1
    swaps = swapper.stop()
    assert outcomes["escaped"] == 0, outcomes
    _outside_untouched(arena)
    assert sum(outcomes.values()) == DIRECT_ATTEMPTS
    # The race was real: d was met as a directory and as a symlink, while it kept moving.
    assert outcomes["read"] > 0, outcomes
    assert outcomes["wrote"] > 0, outcomes
    assert outcomes["refused"] > 0, outcomes
    assert swaps > 1000


def _context(services: Runtime, workspace: Path) -> ToolContext:
    return ToolContext(
        host=services.tool_host,
        session_key="agent:main:main",
        agent_id="main",
        run_id="race",
        workspace=workspace,
    )


async def test_the_file_tools_do_not_escape_while_a_directory_is_swapped(
    services: Runtime, arena: Arena, swapper: Swapper
) -> None:
    ctx = _context(services, arena.workspace)
    outcomes: Counter[str] = Counter()
    for n in range(TOOL_READS):
        result = await ReadFileTool(fs=services.agents_config.fs).invoke(ctx, {"path": "d/f.txt"})
        details: Any = result.details
        if result.is_error:
            outcomes["refused" if "outside the workspace" in details["error"] else "other"] += 1
        else:
            escaped = details["content"].startswith(OUTSIDE.decode())
            outcomes["escaped" if escaped else "read"] += 1
        if n < TOOL_WRITES:
            args: dict[str, Any] = {"path": f"d/t{n % 8}.txt", "content": "t"}
            if n % 5:
                args.update(path="d/f.txt", content="+", append=True)
            written = await WriteFileTool(fs=services.agents_config.fs).invoke(ctx, args)
            outcomes["write refused" if written.is_error else "wrote"] += 1
    swaps = swapper.stop()
    assert outcomes["escaped"] == 0, outcomes
    _outside_untouched(arena)
    assert outcomes["refused"] > 0, outcomes
    assert outcomes["write refused"] > 0, outcomes
    assert swaps > 100
