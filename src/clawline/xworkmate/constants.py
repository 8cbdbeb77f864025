"""Names and limits of the XWorkmate multi-session plugin (docs/xworkmate.md)."""

from __future__ import annotations

from clawline.config import XWORKMATE_PLUGIN_ID

PLUGIN_ID = XWORKMATE_PLUGIN_ID
"""The plugin id OpenClaw knows; the key of this plugin's session extensions."""
LOGGER_NAME = "clawline.plugins.xworkmate"
"""The plugin's logger: the name it had before the package left ``clawline.plugins``, so that
logging configured for ``clawline.plugins`` still covers it."""
MAPPING_NAMESPACE = "xworkmate.sessionMapping"
TASK_RUNS_NAMESPACE = "xworkmate.taskRuns"
TOOL_NAME = "openclaw_multi_session_artifacts"

METHOD_NAMES: tuple[str, ...] = (
    "xworkmate.session.prepare",
    "xworkmate.tasks.get",
    "xworkmate.artifacts.export",
    "xworkmate.artifacts.collect-and-snapshot",
    "xworkmate.artifacts.list",
    "xworkmate.artifacts.read",
)
"""The gateway methods, in the order the plugin registers them."""

TASK_ID_PREFIX = "xworkmate-"
"""The native task clawline creates on prepare is ``xworkmate-<runId>-<digest>``
(:func:`clawline.xworkmate.native.native_task_id`)."""


TASK_SCOPE_ROOT = "tasks"
IGNORE_FILE_NAME = "artifact-ignore.md"
MAX_IGNORE_FILE_BYTES = 64 * 1024
"""A longer artifact-ignore.md is read up to this size only."""
MAX_SCAN_ENTRIES = 100_000
"""Directory entries one export looks at before it stops scanning (with a warning)."""

SKIPPED_DIRS = frozenset(
    {".git", ".openclaw", ".xworkmate", ".pi", ".dart_tool", ".next", ".turbo", "node_modules"}
)
"""Directories a scan never enters; ``dist/`` and ``build/`` are exported."""

DEFAULT_EXPECTED_ARTIFACT_DIRS: tuple[str, ...] = (
    "artifacts/",
    "reports/",
    "exports/",
    "assets/",
    "assets/images/",
    "dist/",
)
"""clawline's default when a caller names no ``expectedArtifactDirs`` (the XWorkmate app's
default; the upstream plugin has none)."""
