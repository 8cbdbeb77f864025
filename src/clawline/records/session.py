"""The session entry: one row of the session catalog."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from clawline.keys import agent_id_of
from clawline.records.lineage import Lineage
from clawline.types import JSON, EpochMs, JSONObject

_EMPTY: Mapping[str, Any] = MappingProxyType({})

LINEAGE_FIELDS: tuple[str, ...] = (
    "spawnedBy",
    "parentSessionKey",
    "spawnDepth",
    "subagentRole",
    "subagentControlScope",
    "spawnedWorkspaceDir",
    "spawnedCwd",
)
"""Lineage fields in their JSON spelling; each is immutable once set."""

CORE_FIELDS: tuple[str, ...] = (
    "key",
    "sessionId",
    "label",
    "displayName",
    "status",
    *LINEAGE_FIELDS,
    "rootSessionKey",
    "traceId",
    "startedAt",
    "endedAt",
    "createdAt",
    "updatedAt",
    "pluginExtensions",
)
"""Fields with their own column in every store; anything else lives in ``extra``."""


@dataclass(frozen=True, slots=True)
class SessionEntry:
    """A session as the catalog stores it.

    ``lineage_path`` lists the keys from the tree's root down to this session (inclusive); it
    is fixed when the session's parent is set and survives the deletion of any ancestor.
    ``extra`` carries the long tail of OpenClaw entry fields (model, thinkingLevel, channel, …)
    by their JSON names.
    """

    key: str
    session_id: str
    created_at: EpochMs
    updated_at: EpochMs
    root_session_key: str
    trace_id: str
    lineage_path: tuple[str, ...]
    label: str | None = None
    display_name: str | None = None
    status: str | None = None
    spawned_by: str | None = None
    parent_session_key: str | None = None
    spawn_depth: int | None = None
    subagent_role: str | None = None
    subagent_control_scope: str | None = None
    spawned_workspace_dir: str | None = None
    spawned_cwd: str | None = None
    started_at: EpochMs | None = None
    ended_at: EpochMs | None = None
    plugin_extensions: Mapping[str, Mapping[str, JSON]] = field(default_factory=lambda: _EMPTY)
    extra: Mapping[str, JSON] = field(default_factory=lambda: _EMPTY)

    @property
    def agent_id(self) -> str:
        return agent_id_of(self.key)

    @property
    def lineage_parent(self) -> str | None:
        """The parent in the tree: ``parentSessionKey``, else ``spawnedBy``."""
        return self.parent_session_key or self.spawned_by

    @property
    def lineage(self) -> Lineage:
        return Lineage(self.lineage_path)

    def to_json(self) -> JSONObject:
        """The entry in its stable JSON form (camelCase, ``null`` for unset core fields).

        ``extra`` fields are merged in; they can never shadow a core field.
        """
        out: JSONObject = dict(self.extra)
        out.update(
            {
                "key": self.key,
                "sessionId": self.session_id,
                "agentId": self.agent_id,
                "label": self.label,
                "displayName": self.display_name,
                "status": self.status,
                "spawnedBy": self.spawned_by,
                "parentSessionKey": self.parent_session_key,
                "spawnDepth": self.spawn_depth,
                "subagentRole": self.subagent_role,
                "subagentControlScope": self.subagent_control_scope,
                "spawnedWorkspaceDir": self.spawned_workspace_dir,
                "spawnedCwd": self.spawned_cwd,
                "rootSessionKey": self.root_session_key,
                "traceId": self.trace_id,
                "startedAt": self.started_at,
                "endedAt": self.ended_at,
                "createdAt": self.created_at,
                "updatedAt": self.updated_at,
                "pluginExtensions": {k: dict(v) for k, v in self.plugin_extensions.items()},
                "lineage": self.lineage.to_json(),
            }
        )
        return out
