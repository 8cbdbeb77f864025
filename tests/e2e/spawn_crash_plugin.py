"""A plugin the spawn crash test loads into a real gateway process (``[plugins] enabled =
["tests.e2e.spawn_crash_plugin"]``): it puts the process's death exactly into a spawn's crash
window.

``subagent_spawned`` runs after the child's session, record and task are committed and its run
is started, and before the ``sessions_spawn`` result reaches the parent's transcript. There the
hook waits ``delayMs`` (so spawns spend a while in that window), and once the file ``armFile``
exists it SIGKILLs its own process instead: the crash lands inside the window, every time.

Config: ``[plugins.entries."spawn-crash".config]`` ``armFile`` (a path), ``delayMs``.
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
