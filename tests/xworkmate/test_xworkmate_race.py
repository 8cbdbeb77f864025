"""Export and read while another process swaps a directory of the task scope for a symlink to
outside (``tests/agents/swapper.py``): no outside content ever reaches a result."""

from __future__ import annotations

import base64
import os
from collections import Counter
from pathlib import Path
from typing import Any

from clawline.xworkmate.export import export_artifacts
from clawline.xworkmate.open_params import XWorkmateError
from clawline.xworkmate.read import read_artifact
from clawline.xworkmate.scope import TaskScope
from tests.agents.swapper import start_swapper
from tests.xworkmate.xworkmate_support import SECRET, options, write

SCOPE = TaskScope("agent:main:thread-main", "turn-1")
ATTEMPTS = 300


def test_export_and_read_never_return_outside_content_during_a_swap(tmp_path: Path) -> None:
    root = Path(os.path.realpath(tmp_path / "workspace"))
    scope_dir = root / SCOPE.relative
    write(scope_dir / "d" / "f.txt", "inside")
    outside = write(tmp_path / "outside" / "f.txt", "OUTSIDE").parent
    (scope_dir / "d_link").symlink_to(outside)
    swapper = start_swapper(scope_dir, tmp_path / "stop")
    outcomes: Counter[str] = Counter()
    try:
        for _ in range(ATTEMPTS):
            exported: Any = export_artifacts(root, SCOPE, options(), SECRET)["artifacts"]
            contents = {base64.b64decode(a["content"]) for a in exported}
            outcomes["escaped" if b"OUTSIDE" in contents else "exported"] += bool(exported)
            params = {"artifactScope": SCOPE.relative, "relativePath": "d/f.txt"}
            try:
                result: Any = read_artifact(
                    root, SCOPE, params, expected_dirs=[], secret=SECRET, max_inline_bytes=64
                )
            except XWorkmateError as error:
                outcomes[str(error)] += 1
            else:
                content = base64.b64decode(result["artifacts"][0]["content"])
                outcomes["escaped" if content == b"OUTSIDE" else "read"] += 1
    finally:
        swaps = swapper.stop()
    assert outcomes["escaped"] == 0, outcomes
    assert outcomes["relativePath must stay inside the workspace"] > 0, outcomes
    assert swaps > 100
    assert (outside / "f.txt").read_text() == "OUTSIDE"
