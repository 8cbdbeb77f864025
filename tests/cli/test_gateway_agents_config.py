"""``clawline gateway run`` refuses a bad agent configuration before it listens."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("clawline")


def test_an_out_of_range_value_stops_start_up_with_one_line(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.toml").write_text("[agents.defaults.subagents]\nmaxSpawnDepth = 9\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWLINE_")}
    env["CLAWLINE_STATE_DIR"] = str(state)
    result = subprocess.run(
        [str(SCRIPT), "gateway", "run", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "error: config: agents.defaults.subagents.maxSpawnDepth must be an integer from 1 to 5\n"
    )
