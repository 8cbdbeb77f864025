"""A plugin the crash tests load into a real gateway process (``[plugins] enabled =
["tests.e2e.spawn_crash_plugin"]``): it puts the process's death exactly into a spawn's crash
window, or between a child's end and the delivery of its completion.

``subagent_spawned`` runs after the child's session, record and task are committed and its run
is started — with the ``sessions_spawn`` result, which a turn's spawn writes in that transaction
— and before the tool returns to the turn. There the hook waits ``delayMs`` (so spawns spend a
while there), and once the file ``armFile`` exists it SIGKILLs its own process instead: the
crash lands right after a spawn's commit, every time.

``subagent_ended`` runs after the child's end, its task's terminal status and its inbox row are
committed, before the requester has answered the completion: once the file ``endArmFile``
exists, the hook removes it and SIGKILLs its own process (so the next life runs on).

Config: ``[plugins.entries."spawn-crash".config]`` ``armFile``, ``endArmFile`` (paths),
``delayMs``.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

from clawline.plugins import HookContext, hookimpl

PLUGIN_ID = "spawn-crash"


@hookimpl
async def subagent_spawned(event: dict[str, Any], ctx: HookContext) -> None:
    arm = ctx.config.get("armFile")
    if isinstance(arm, str) and Path(arm).exists():
        os.kill(os.getpid(), signal.SIGKILL)
    delay = ctx.config.get("delayMs", 0)
    await asyncio.sleep(float(delay) / 1000)


@hookimpl
async def subagent_ended(event: dict[str, Any], ctx: HookContext) -> None:
    arm = ctx.config.get("endArmFile")
    if isinstance(arm, str) and Path(arm).exists():
        Path(arm).unlink()
        os.kill(os.getpid(), signal.SIGKILL)
