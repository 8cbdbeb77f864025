"""The acp spawn runtime is built and started without the ACP SDK: it is imported when the first
agent process starts, not at gateway start (a fresh interpreter, so no other test's imports
count)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.acp_runtime.support import acp_config

PROBE = """
import asyncio, json, sys
from pathlib import Path
from clawline.config import Settings
from clawline.runtime import Runtime

async def main() -> None:
    state, raw, then = Path(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
    runtime = Runtime.open(Settings(state_dir=state, raw=raw))
    seen = {}
    try:
        async with runtime:
            seen["started"] = "acp" in sys.modules
        if then:
            __import__(then)
        seen["after"] = "acp" in sys.modules
    finally:
        runtime.close()
    print(json.dumps(seen))

asyncio.run(main())
"""


def _probe(tmp_path: Path, then: str = "") -> dict[str, bool]:
    raw = acp_config(tmp_path / "tiny.jsonl")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "state"), json.dumps(raw), then],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, bool] = json.loads(done.stdout)
    return seen


def test_the_runtime_starts_without_the_acp_sdk(tmp_path: Path) -> None:
    assert _probe(tmp_path) == {"started": False, "after": False}


def test_the_agent_process_module_brings_the_sdk(tmp_path: Path) -> None:
    """The probe can see the SDK: importing what an agent start imports loads it."""
    seen = _probe(tmp_path, then="clawline.collab.acp.child_agent")
    assert seen == {"started": False, "after": True}
