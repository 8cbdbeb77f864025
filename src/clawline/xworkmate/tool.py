"""The agent tool ``openclaw_multi_session_artifacts``: a model lists or reads the
artifacts of the run it is in.

The session, the run and the workspace come only from the host (the tool context); the
``sessionKey``, ``openclawSessionKey``, ``runId`` and ``workspaceDir`` a model passes are
dropped. ``list`` answers the Markdown manifest; ``read`` the manifest and the file's base64
content (or a note when it is too large to inline).

The tool works on the started plugin's state (its host and settings), asked for at each call:
it is registered before the plugin starts.
"""

from __future__ import annotations

from collections.abc import Mapping

from clawline.agents.tools.base import ToolContext, ToolResult, ToolSpec
from clawline.errors import ClawlineError
from clawline.types import JSON, JSONObject
from clawline.xworkmate import operations
from clawline.xworkmate.constants import TOOL_NAME
from clawline.xworkmate.manifest import manifest_markdown
from clawline.xworkmate.state import StateSource

HOST_ONLY = ("sessionKey", "openclawSessionKey", "runId", "workspaceDir")

_PARAMETERS: JSONObject = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "action": {
            "type": "string",
            "enum": ["list", "read"],
            "description": "list: the artifacts of this task run; read: one small file.",
        },
        "relativePath": {
            "type": "string",
            "description": "Path relative to artifactScope (read without artifactRef).",
        },
        "artifactScope": {
            "type": "string",
            "description": "The task scope returned by list, tasks/<session>/<run>.",
        },
        "artifactRef": {"type": "string", "description": "A signed reference from list."},
        "sinceUnixMs": {"type": "number", "description": "Only files changed since then."},
        "maxFiles": {"type": "number", "description": "At most this many files."},
        "maxInlineBytes": {"type": "number", "description": "Inline files up to this size."},
    },
    "required": ["action"],
}


def _read_text(result: JSONObject) -> str:
    text = manifest_markdown(result)
    artifacts = result.get("artifacts")
    artifact = artifacts[0] if isinstance(artifacts, list) and artifacts else None
    if not isinstance(artifact, Mapping):
        return text
    path = artifact.get("relativePath")
    if artifact.get("content"):
        body = f"Base64 content for `{path}`:\n\n```base64\n{artifact.get('content')}\n```"
    else:
        body = f"`{path}` is larger than maxInlineBytes; use the workspace path to download it."
    return f"{text}\n\n{body}"


class ArtifactsTool:
    spec = ToolSpec(
        name=TOOL_NAME,
        description=(
            "List the artifacts of the current task run in the workspace, or read one small "
            "artifact as base64 for XWorkmate."
        ),
        parameters=_PARAMETERS,
    )

    def __init__(self, *, state: StateSource) -> None:
        self._state = state

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        if not ctx.session_key:
            return ToolResult.error("sessionKey required")
        if not ctx.run_id:
            return ToolResult.error("runId required")
        action = args.get("action")
        if action not in ("list", "read"):
            return ToolResult.error("action must be list or read")
        params = {name: value for name, value in args.items() if name not in HOST_ONLY}
        params.update(openclawSessionKey=ctx.session_key, runId=ctx.run_id)
        try:
            started = self._state()
            host, config = started.host, started.config
            if action == "list":
                result = await operations.list_artifacts(
                    params, host=host, config=config, root=ctx.workspace
                )
                text = str(result["manifestMarkdown"])
            else:
                result = await operations.read(params, host=host, config=config, root=ctx.workspace)
                text = _read_text(result)
        except ClawlineError as error:
            return ToolResult.error(error.message)
        artifacts = result.get("artifacts")
        count = len(artifacts) if isinstance(artifacts, list) else 0
        return ToolResult({"status": "ok", "action": action, "artifactCount": count, "text": text})
