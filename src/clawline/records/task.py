"""The task record (docs/tasks.md): what a background piece of work is, who owns it and
where it stands.

Statuses move along an enforced transition table (:data:`TRANSITIONS`)::

    queued ──→ running ──→ succeeded | failed | timed_out | cancelled | lost
       └──────────────────→ failed | timed_out | cancelled | lost

A terminal status never changes again. OpenClaw's direct setters do not enforce this; clawline
does (:func:`check_transition`), and the registry decides where an illegal move is an error and
where it is ignored (see :class:`~clawline.tasks.registry.TaskRegistry`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any, Literal, TypeAlias

from clawline.errors import InvalidField, InvalidInput, NotFound
from clawline.types import JSON, EpochMs, JSONObject

TaskStatus: TypeAlias = Literal[
    "queued", "running", "succeeded", "failed", "timed_out", "cancelled", "lost"
]
TaskRuntime: TypeAlias = Literal["subagent", "acp", "cli", "cron"]
ScopeKind: TypeAlias = Literal["session", "system"]
DeliveryStatus: TypeAlias = Literal[
    "pending", "delivered", "session_queued", "failed", "parent_missing", "not_applicable"
]
NotifyPolicy: TypeAlias = Literal["done_only", "state_changes", "silent"]

TASK_STATUSES: tuple[str, ...] = (
    "queued",
    "running",
    "succeeded",
    "failed",
    "timed_out",
    "cancelled",
    "lost",
)
ACTIVE_STATUSES: frozenset[str] = frozenset({"queued", "running"})
TERMINAL_STATUSES: frozenset[str] = frozenset(TASK_STATUSES) - ACTIVE_STATUSES
FAILURE_STATUSES: frozenset[str] = frozenset({"failed", "timed_out", "lost"})
"""Terminal statuses the summary counts as failures."""
RUNTIMES: tuple[str, ...] = ("subagent", "acp", "cli", "cron")
SCOPE_KINDS: tuple[str, ...] = ("session", "system")
DELIVERY_STATUSES: tuple[str, ...] = (
    "pending",
    "delivered",
    "session_queued",
    "failed",
    "parent_missing",
    "not_applicable",
)
NOTIFY_POLICIES: tuple[str, ...] = ("done_only", "state_changes", "silent")
TERMINAL_OUTCOMES: tuple[str, ...] = ("succeeded", "blocked")

TRANSITIONS: Mapping[str, frozenset[str]] = {
    # A queued task never ran, so it cannot have succeeded.
    "queued": frozenset({"running", "failed", "timed_out", "cancelled", "lost"}),
    "running": frozenset({"succeeded", "failed", "timed_out", "cancelled", "lost"}),
    **{status: frozenset() for status in TERMINAL_STATUSES},
}
"""Every legal move: ``TRANSITIONS[from]`` holds the statuses ``from`` may become. Staying in
the same status is not a transition."""


class InvalidTaskTransition(InvalidInput):
    """A task was asked to move between two statuses the transition table does not link."""

    def __init__(self, task_id: str, current: str, wanted: str) -> None:
        super().__init__(f"invalid task transition: {current} -> {wanted} (task {task_id})")
        self.task_id = task_id
        self.current = current
        self.wanted = wanted


class TaskNotFound(NotFound):
    """No task matches the id, run id or token given."""


def check_transition(task_id: str, current: str, wanted: str) -> None:
    """Raise :class:`InvalidTaskTransition` unless ``current -> wanted`` is legal."""
    if wanted not in TRANSITIONS.get(current, frozenset()):
        raise InvalidTaskTransition(task_id, current, wanted)


def default_notify_policy(runtime: str) -> NotifyPolicy:
    """OpenClaw's defaults: sub-agent and ACP tasks notify when done; CLI and cron are silent."""
    return "done_only" if runtime in ("subagent", "acp") else "silent"


def default_delivery_status(requester_session_key: str, notify_policy: str) -> DeliveryStatus:
    """``not_applicable`` for silent tasks, ``parent_missing`` without a requester, else
    ``pending``."""
    if notify_policy == "silent":
        return "not_applicable"
    return "pending" if requester_session_key else "parent_missing"


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One task, with OpenClaw's fields (``to_json`` gives their camelCase names)."""

    task_id: str
    runtime: str
    requester_session_key: str
    owner_key: str
    scope_kind: str
    task: str
    status: str
    delivery_status: str
    notify_policy: str
    created_at: EpochMs
    task_kind: str | None = None
    source_id: str | None = None
    child_session_key: str | None = None
    parent_flow_id: str | None = None
    parent_task_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    label: str | None = None
    started_at: EpochMs | None = None
    ended_at: EpochMs | None = None
    last_event_at: EpochMs | None = None
    cleanup_after: EpochMs | None = None
    error: str | None = None
    progress_summary: str | None = None
    terminal_summary: str | None = None
    terminal_outcome: str | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def backing_session_key(self) -> str | None:
        """The session whose existence keeps the task alive: the child, else (for a
        session-scoped task) the requester."""
        if self.child_session_key:
            return self.child_session_key
        if self.scope_kind == "session" and self.requester_session_key:
            return self.requester_session_key
        return None

    def to_json(self) -> JSONObject:
        """Every field by its OpenClaw name, ``null`` when unset, in OpenClaw's field order."""
        return {json_name: getattr(self, name) for name, json_name in _JSON_NAMES.items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TaskRecord:
        """The record :meth:`to_json` was made from (unknown names are ignored)."""
        try:
            values: dict[str, Any] = {
                name: data.get(json_name) for name, json_name in _JSON_NAMES.items()
            }
            for name in _REQUIRED:
                if not isinstance(values[name], str | int) or isinstance(values[name], bool):
                    raise InvalidField(f"task JSON without {_JSON_NAMES[name]}")
            return cls(**values)
        except TypeError as error:
            raise InvalidField(f"malformed task JSON: {error}") from None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_JSON_ORDER = (
    "task_id",
    "runtime",
    "task_kind",
    "source_id",
    "requester_session_key",
    "owner_key",
    "scope_kind",
    "child_session_key",
    "parent_flow_id",
    "parent_task_id",
    "agent_id",
    "run_id",
    "label",
    "task",
    "status",
    "delivery_status",
    "notify_policy",
    "created_at",
    "started_at",
    "ended_at",
    "last_event_at",
    "cleanup_after",
    "error",
    "progress_summary",
    "terminal_summary",
    "terminal_outcome",
)
assert set(_JSON_ORDER) == {field.name for field in fields(TaskRecord)}
_JSON_NAMES: dict[str, str] = {name: _camel(name) for name in _JSON_ORDER}
_REQUIRED = tuple(field.name for field in fields(TaskRecord) if field.default is MISSING)


@dataclass(frozen=True, slots=True)
class TaskEvent:
    """One entry of a task's history: a status it reached, or ``progress``."""

    task_id: str
    seq: int
    at: EpochMs
    kind: str
    summary: str | None = None

    def to_json(self) -> JSONObject:
        out: dict[str, JSON] = {"at": self.at, "kind": self.kind, "summary": self.summary}
        return out
