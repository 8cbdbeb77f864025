"""What a spawn creates (OpenClaw's rules): the child's key, depth, role and control
scope, its first message and its system prompt.

- key ``agent:<targetAgentId>:subagent:<uuid-v4>`` (flat at every depth);
- depth = requester depth + 1; role ``orchestrator`` while depth < ``maxSpawnDepth`` (of the
  requester's agent), else ``leaf``; control scope ``children`` for orchestrators, ``none``
  for leaves;
- message ``[Subagent Context] You are running as a subagent (depth d/m). Results
  auto-announce to your requester; do not busy-poll for status.`` (plus a line for a
  persistent session), then ``[Subagent Task]: <task>`` on its own line.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from clawline import keys
from clawline.agents.steps import SUBAGENT_TASK_PREFIX
from clawline.types import JSONObject

SUBAGENT_CONTEXT_PREFIX = "[Subagent Context]"
_PERSISTENT_LINE = (
    f"{SUBAGENT_CONTEXT_PREFIX} This is a persistent session: it stays bound to its thread "
    "after this task, and follow-up messages arrive there."
)


@dataclass(frozen=True, slots=True)
class ChildPlan:
    """The child a spawn creates."""

    requester: str
    child_key: str
    run_id: str
    task_id: str
    target_agent_id: str
    depth: int
    max_depth: int
    label: str | None
    task: str
    mode: str
    cleanup: str
    workspace_dir: str
    run_timeout_seconds: int
    expects_completion_message: bool
    model: str | None = None
    thinking: str | None = None
    spawn_key: str | None = None
    """The spawn's durable key (:mod:`clawline.collab.spawn_key`)."""

    @property
    def role(self) -> str:
        return "orchestrator" if self.depth < self.max_depth else "leaf"

    @property
    def control_scope(self) -> str:
        return "children" if self.role == "orchestrator" else "none"

    def entry_changes(self) -> JSONObject:
        """The child entry's fields: lineage through ``spawnedBy`` and ``parentSessionKey``
        (both the requester, so the ``create`` event names the parent, as in OpenClaw)."""
        changes: JSONObject = {
            "spawnedBy": self.requester,
            "parentSessionKey": self.requester,
            "spawnDepth": self.depth,
            "subagentRole": self.role,
            "subagentControlScope": self.control_scope,
            "spawnedWorkspaceDir": self.workspace_dir,
        }
        if self.label is not None:
            changes["label"] = self.label
        if self.model is not None:
            changes["model"] = self.model
        if self.thinking is not None:
            changes["thinkingLevel"] = self.thinking
        return changes

    @property
    def timeout_ms(self) -> int:
        """The run's timeout; 0 means none (``runTimeoutSeconds: 0``), not the agent default."""
        return self.run_timeout_seconds * 1000

    def message(self) -> str:
        persistent = self.mode == "session"
        return child_message(self.task, self.depth, self.max_depth, persistent=persistent)

    def system_prompt(self) -> str:
        return subagent_system_prompt(
            requester=self.requester,
            child_key=self.child_key,
            label=self.label,
            depth=self.depth,
            max_depth=self.max_depth,
        )


def plan_child(
    *,
    requester: str,
    requester_depth: int,
    max_depth: int,
    target_agent_id: str,
    task: str,
    label: str | None,
    mode: str,
    cleanup: str,
    workspace_dir: str,
    run_timeout_seconds: int,
    expects_completion_message: bool,
    model: str | None = None,
    thinking: str | None = None,
    spawn_key: str | None = None,
) -> ChildPlan:
    child_id = str(uuid.uuid4())
    return ChildPlan(
        requester=requester,
        child_key=keys.subagent_session_key(target_agent_id, child_id),
        run_id=str(uuid.uuid4()),
        task_id=str(uuid.uuid4()),
        target_agent_id=target_agent_id,
        depth=requester_depth + 1,
        max_depth=max_depth,
        label=label,
        task=task,
        mode=mode,
        cleanup=cleanup,
        workspace_dir=workspace_dir,
        run_timeout_seconds=run_timeout_seconds,
        expects_completion_message=expects_completion_message,
        model=model,
        thinking=thinking,
        spawn_key=spawn_key,
    )


def child_message(task: str, depth: int, max_depth: int, *, persistent: bool = False) -> str:
    lines = [
        f"{SUBAGENT_CONTEXT_PREFIX} You are running as a subagent (depth {depth}/{max_depth}). "
        "Results auto-announce to your requester; do not busy-poll for status."
    ]
    if persistent:
        lines.append(_PERSISTENT_LINE)
    lines.append(f"{SUBAGENT_TASK_PREFIX} {task}")
    return "\n".join(lines)


def subagent_system_prompt(
    *, requester: str, child_key: str, label: str | None, depth: int, max_depth: int
) -> str:
    """The ``extraSystemPrompt`` of a subagent's runs."""
    orchestrator = depth < max_depth
    lines = [
        "# Subagent",
        "You are a subagent: a session another session started to do one task.",
        f"Requester session: {requester}.",
        f"Your session: {child_key}." + (f' Label: "{label}".' if label else ""),
        f"Depth {depth} of at most {max_depth}; role: "
        + ("orchestrator." if orchestrator else "leaf."),
        f'Your task follows "{SUBAGENT_TASK_PREFIX}" in your first message. Do it and end '
        "with the result as your final answer: it reaches your requester on its own as a "
        "completion event. Do not poll for status and do not wait for more instructions.",
    ]
    if orchestrator:
        lines.append(
            "You may start subagents of your own with sessions_spawn; their results arrive "
            "as completion events. Give your final answer once every one you expect has "
            "arrived."
        )
    else:
        lines.append("You cannot start subagents of your own.")
    return "\n".join(lines)
