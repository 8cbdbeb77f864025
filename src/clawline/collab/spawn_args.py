"""``sessions_spawn``'s arguments (OpenClaw's parameters): read, type-checked and defaulted.

Checks here are about the arguments alone; the policy checks that need the requester (depth,
active children, allowed agents, …) are the spawn tool's (:mod:`clawline.collab.spawn`).

- A channel-delivery key (``target``, ``transport``, ``channel``, ``to``, ``threadId``,
  ``thread_id``, ``replyTo``, ``reply_to``) is refused first with OpenClaw's text
  (:func:`channel_key_refusal`).
- ``mode`` defaults to ``run``, or ``session`` with ``thread: true``; ``cleanup`` is forced to
  ``keep`` in session mode; ``runTimeoutSeconds`` has the alias ``timeoutSeconds``.
- Runtime-bound options (:func:`runtime_refusal`): ``resumeSessionId`` and ``streamTo`` are ACP
  only, ``lightContext`` and ``attachments`` subagent only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from clawline.collab.tool_args import ArgumentError, optional_int, optional_string, required_string
from clawline.sessions.labels import MAX_LABEL_LENGTH
from clawline.types import JSON, JSONObject

CHANNEL_KEYS = (
    "target",
    "transport",
    "channel",
    "to",
    "threadId",
    "thread_id",
    "replyTo",
    "reply_to",
)
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
_MOUNT_PATH_UNSAFE = re.compile(r"[^A-Za-z0-9._\-/:]")


@dataclass(frozen=True, slots=True)
class RawAttachment:
    name: str
    content: str
    encoding: str = "utf8"
    mime_type: str | None = None


@dataclass(frozen=True, slots=True)
class SpawnRequest:
    task: str
    label: str | None = None
    runtime: str = "subagent"
    agent_id: str | None = None
    """As given (checked against the agent id grammar by the spawn's first check)."""
    resume_session_id: str | None = None
    model: str | None = None
    thinking: str | None = None
    cwd: str | None = None
    run_timeout_seconds: int | None = None
    thread: bool = False
    mode: str = "run"
    cleanup: str = "keep"
    sandbox: str = "inherit"
    stream_to: str | None = None
    light_context: bool = False
    attachments: list[RawAttachment] = field(default_factory=list)
    mount_path: str | None = None
    expects_completion_message: bool = True


def channel_key_refusal(args: Mapping[str, JSON]) -> str | None:
    """OpenClaw's text for the first channel-delivery key present, else ``None``."""
    for key in CHANNEL_KEYS:
        if key in args:
            return (
                f'sessions_spawn does not support "{key}". Use "message" or "sessions_send" '
                "for channel delivery."
            )
    return None


def _choice(args: Mapping[str, JSON], name: str, allowed: tuple[str, ...]) -> str | None:
    value = optional_string(args, name)
    if value is not None and value not in allowed:
        listed = " or ".join(f'"{item}"' for item in allowed)
        raise ArgumentError(f"{name} must be {listed}")
    return value


def _flag(args: Mapping[str, JSON], name: str) -> bool | None:
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise ArgumentError(f"{name} must be a boolean")
    return value


def _attachments(args: Mapping[str, JSON]) -> list[RawAttachment]:
    value = args.get("attachments")
    if value is None:
        return []
    shape = "attachments must be an array of {name, content, encoding?, mimeType?}"
    if not isinstance(value, list):
        raise ArgumentError(shape)
    found: list[RawAttachment] = []
    for item in value:
        if not isinstance(item, dict):
            raise ArgumentError(shape)
        name, content = item.get("name"), item.get("content")
        encoding = item.get("encoding", "utf8")
        mime = item.get("mimeType")
        if not isinstance(name, str) or not name.strip() or not isinstance(content, str):
            raise ArgumentError(shape)
        if encoding not in ("utf8", "base64"):
            raise ArgumentError('attachments encoding must be "utf8" or "base64"')
        if mime is not None and not isinstance(mime, str):
            raise ArgumentError(shape)
        found.append(RawAttachment(name.strip(), content, str(encoding), mime))
    return found


def _mount_path(args: Mapping[str, JSON]) -> str | None:
    attach_as = args.get("attachAs")
    if attach_as is None:
        return None
    if not isinstance(attach_as, dict):
        raise ArgumentError("attachAs must be an object")
    raw = attach_as.get("mountPath")
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ArgumentError("attachAs.mountPath must be a string")
    cleaned = _MOUNT_PATH_UNSAFE.sub("", raw.strip())
    return cleaned or None


def parse_spawn_args(args: Mapping[str, JSON]) -> SpawnRequest:
    """The request, or :class:`ArgumentError` with the message for the model."""
    task = required_string(args, "task")
    label = optional_string(args, "label", min_len=1, max_len=MAX_LABEL_LENGTH)
    runtime = _choice(args, "runtime", ("subagent", "acp")) or "subagent"
    timeout = optional_int(args, "runTimeoutSeconds", minimum=0)
    if timeout is None:
        timeout = optional_int(args, "timeoutSeconds", minimum=0)
    thread = _flag(args, "thread") or False
    mode = _choice(args, "mode", ("run", "session")) or ("session" if thread else "run")
    cleanup = _choice(args, "cleanup", ("delete", "keep")) or "keep"
    expects = _flag(args, "expectsCompletionMessage")
    return SpawnRequest(
        task=task,
        label=label,
        runtime=runtime,
        agent_id=optional_string(args, "agentId"),
        resume_session_id=optional_string(args, "resumeSessionId"),
        model=optional_string(args, "model"),
        thinking=optional_string(args, "thinking"),
        cwd=optional_string(args, "cwd"),
        run_timeout_seconds=timeout,
        thread=thread,
        mode=mode,
        cleanup="keep" if mode == "session" else cleanup,
        sandbox=_choice(args, "sandbox", ("inherit", "require")) or "inherit",
        stream_to=_choice(args, "streamTo", ("parent",)),
        light_context=_flag(args, "lightContext") or False,
        attachments=_attachments(args),
        mount_path=_mount_path(args),
        expects_completion_message=True if expects is None else expects,
    )


def runtime_refusal(request: SpawnRequest) -> str | None:
    """Options given to the runtime that does not take them (OpenClaw's texts)."""
    runtime = request.runtime
    if request.resume_session_id is not None and runtime != "acp":
        return f"resumeSessionId is only supported for runtime=acp; got runtime={runtime}"
    if request.stream_to is not None and runtime != "acp":
        return f"streamTo is only supported for runtime=acp; got runtime={runtime}"
    if request.light_context and runtime != "subagent":
        return "lightContext is only supported for runtime='subagent'."
    if request.attachments and runtime == "acp":
        return (
            "attachments are currently unsupported for runtime=acp; use runtime=subagent or "
            "remove attachments"
        )
    return None


def tool_schema() -> JSONObject:
    """The JSON schema offered to models (the hidden ``expectsCompletionMessage`` is left out)."""
    string: JSONObject = {"type": "string"}
    return {
        "type": "object",
        "properties": {
            "task": {"type": "string", "description": "What the subagent should do."},
            "label": {"type": "string", "maxLength": MAX_LABEL_LENGTH},
            "runtime": {"type": "string", "enum": ["subagent", "acp"]},
            "agentId": {"type": "string", "description": "Target agent id (default: yours)."},
            "resumeSessionId": string,
            "model": string,
            "thinking": {"type": "string", "enum": list(THINKING_LEVELS)},
            "cwd": string,
            "runTimeoutSeconds": {"type": "number", "minimum": 0},
            "thread": {"type": "boolean"},
            "mode": {"type": "string", "enum": ["run", "session"]},
            "cleanup": {"type": "string", "enum": ["delete", "keep"]},
            "sandbox": {"type": "string", "enum": ["inherit", "require"]},
            "streamTo": {"type": "string", "enum": ["parent"]},
            "lightContext": {"type": "boolean"},
            "attachments": {
                "type": "array",
                "maxItems": 50,
                "items": {
                    "type": "object",
                    "properties": {
                        "name": string,
                        "content": string,
                        "encoding": {"type": "string", "enum": ["utf8", "base64"]},
                        "mimeType": string,
                    },
                    "required": ["name", "content"],
                },
            },
            "attachAs": {"type": "object", "properties": {"mountPath": string}},
        },
        "required": ["task"],
    }
