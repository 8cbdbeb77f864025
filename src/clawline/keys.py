"""Session keys: the OpenClaw key grammar, normalisation and classification.

Canonical keys are lower-case and colon-separated, normally ``agent:<agentId>:<rest>``::

    agent:main:main                          the agent's main session
    agent:main:subagent:<uuid>               a native sub-agent (flat at every depth)
    agent:codex:acp:<uuid>                   an ACP child
    agent:main:dashboard:<uuid>              a "New chat" from the dashboard
    agent:main:cron:<job>[:run:<run>]        cron sessions and isolated cron runs
    agent:main:<channel>:group:<peer>        group, channel and room conversations
    <base>:thread:<threadId>                 a thread under any base key
    global, unknown                          the two literal buckets

Everything here is a pure function. Malformed keys raise :class:`InvalidSessionKey` with a
message that says what is wrong.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Literal

from clawline.errors import InvalidField, InvalidSessionKey

DEFAULT_AGENT_ID = "main"
DEFAULT_MAIN_KEY = "main"
MAX_KEY_LENGTH = 512
"""clawline's own bound on a key's length; OpenClaw sets none."""

_AGENT_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_SESSION_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,127}")
_CRON_RUN_REST = re.compile(r"cron:[^:]+:run:[^:]+")
_UNSAFE_CHARS = re.compile(r"[\s\x00-\x1f\x7f]")
_LITERAL_BUCKETS = frozenset({"global", "unknown"})
_GROUP_MARKERS = frozenset({"group", "channel", "room"})


@dataclass(frozen=True, slots=True)
class ParsedKey:
    """An ``agent:<agentId>:<rest>`` key split into its agent id and the rest."""

    agent_id: str
    rest: str


# --- agent ids -------------------------------------------------------------------------------


def is_valid_agent_id(value: str) -> bool:
    """True when ``value`` matches ``^[a-z0-9][a-z0-9_-]{0,63}$`` ignoring case."""
    return bool(_AGENT_ID.fullmatch(value.lower()))


def normalize_agent_id(value: str) -> str:
    """Lower-case a valid agent id; raise :class:`InvalidField` for an invalid one."""
    lowered = value.strip().lower()
    if not _AGENT_ID.fullmatch(lowered):
        raise InvalidField(
            f'Invalid agentId "{value}". Agent IDs must match [a-z0-9][a-z0-9_-]{{0,63}}.'
        )
    return lowered


def sanitize_agent_id(value: str) -> str:
    """OpenClaw's lenient normalisation: never fails, falls back to ``main``."""
    lowered = value.strip().lower()
    if _AGENT_ID.fullmatch(lowered):
        return lowered
    replaced = re.sub(r"[^a-z0-9_-]", "-", lowered).strip("-")[:64]
    return replaced if replaced and _AGENT_ID.fullmatch(replaced) else DEFAULT_AGENT_ID


# --- parsing ---------------------------------------------------------------------------------


def parse_agent_session_key(key: str) -> ParsedKey | None:
    """OpenClaw's ``parseAgentSessionKey``: lower-case, split on ``:``, drop empty parts.

    Returns ``None`` unless there are at least three parts and the first is ``agent``.
    """
    parts = [part for part in key.strip().lower().split(":") if part]
    if len(parts) < 3 or parts[0] != "agent":
        return None
    return ParsedKey(agent_id=parts[1], rest=":".join(parts[2:]))


def agent_id_of(key: str, default: str = DEFAULT_AGENT_ID) -> str:
    """The agent id a key belongs to (``default`` for non-agent keys)."""
    parsed = parse_agent_session_key(key)
    return parsed.agent_id if parsed else default


def _rest_of(key: str) -> str:
    parsed = parse_agent_session_key(key)
    return parsed.rest if parsed else key.strip().lower()


def is_subagent_key(key: str) -> bool:
    """A sub-agent key in OpenClaw's loose sense: ``subagent:…`` or ``agent:<id>:subagent:…``."""
    return key.strip().lower().startswith("subagent:") or _rest_of(key).startswith("subagent:")


def is_acp_key(key: str) -> bool:
    """An ACP key: ``acp:…`` or ``agent:<id>:acp:…``."""
    return key.strip().lower().startswith("acp:") or _rest_of(key).startswith("acp:")


def is_lineage_capable(key: str) -> bool:
    """Only sub-agent and ACP sessions accept the spawn lineage fields."""
    return is_subagent_key(key) or is_acp_key(key)


def is_cron_key(key: str) -> bool:
    return _rest_of(key).startswith("cron:")


def is_cron_run_key(key: str) -> bool:
    """An isolated cron run (``agent:<id>:cron:<job>:run:<run>``); never listed."""
    return bool(_CRON_RUN_REST.fullmatch(_rest_of(key)))


def is_native_subagent_key(key: str) -> bool:
    """The strict UI rule: exactly ``agent``, a non-empty id, ``subagent``, a non-empty id."""
    parts = key.split(":")
    return (
        len(parts) == 4
        and parts[0] == "agent"
        and parts[1] != ""
        and parts[2] == "subagent"
        and parts[3] != ""
    )


def thread_parent_key(key: str) -> str | None:
    """The base key of a thread key (split at the last ``:thread:``), else ``None``."""
    index = key.rfind(":thread:")
    if index <= 0:
        return None
    return key[:index]


def chat_kind(key: str) -> Literal["direct", "group", "global", "unknown"]:
    """The listing row ``kind`` of a key."""
    if key in _LITERAL_BUCKETS:
        return "global" if key == "global" else "unknown"
    base = thread_parent_key(key) or key
    parts = _rest_of(base).split(":")
    if any(part in _GROUP_MARKERS for part in parts[1:]):
        return "group"
    return "direct"


def tool_kind(
    key: str, main_key: str = DEFAULT_MAIN_KEY
) -> Literal["main", "group", "cron", "hook", "node", "other"]:
    """The ``sessions_list`` kind of a key."""
    rest = _rest_of(key)
    if key == "global" or rest == main_key:
        return "main"
    if rest.startswith("cron:"):
        return "cron"
    if rest.startswith("hook:"):
        return "hook"
    if rest.startswith(("node-", "node:")):
        return "node"
    if ":group:" in f":{rest}:" or ":channel:" in f":{rest}:":
        return "group"
    return "other"


def display_key(key: str, main_key: str = DEFAULT_MAIN_KEY) -> str:
    """Tool-facing display form: the agent main key shows as ``main``."""
    parsed = parse_agent_session_key(key)
    if parsed and parsed.rest == main_key:
        return "main"
    return key


# --- canonicalisation ------------------------------------------------------------------------


def canonicalize(
    raw: object,
    *,
    default_agent_id: str = DEFAULT_AGENT_ID,
    main_key: str = DEFAULT_MAIN_KEY,
) -> str:
    """Turn a requested key into the canonical stored key, or raise :class:`InvalidSessionKey`.

    Rules (OpenClaw's store canonicalisation, made strict):

    - ``global`` and ``unknown`` stay as they are;
    - an empty key or ``main`` is the default agent's main key;
    - ``agent:<id>:<rest>`` is lower-cased; ``rest`` equal to the main key stays the main key;
    - any other key is placed under the default agent: ``agent:<default>:<lower-cased key>``.

    Refused: non-strings, keys over :data:`MAX_KEY_LENGTH`, whitespace or control characters,
    empty ``:``-separated parts, an ``agent:`` key with fewer than three parts, and invalid
    agent ids.
    """
    if not isinstance(raw, str):
        raise InvalidSessionKey("invalid session key: must be a string")
    key = raw.strip()
    if not key or key.lower() in (DEFAULT_MAIN_KEY, main_key):
        return main_session_key(default_agent_id, main_key)
    if _UNSAFE_CHARS.search(key):
        raise InvalidSessionKey(
            f"invalid session key: whitespace or control characters are not allowed: {key!r}"
        )
    lowered = key.lower()
    if len(lowered) > MAX_KEY_LENGTH:
        raise InvalidSessionKey(f"invalid session key: too long (max {MAX_KEY_LENGTH})")
    if lowered in _LITERAL_BUCKETS:
        return lowered
    parts = lowered.split(":")
    if "" in parts:
        raise InvalidSessionKey(f"invalid session key: empty part in {key!r}")
    if parts[0] == "agent":
        if len(parts) < 3:
            raise InvalidSessionKey(
                f"invalid session key: {key!r} needs the form agent:<agentId>:<rest>"
            )
        if not _AGENT_ID.fullmatch(parts[1]):
            raise InvalidSessionKey(
                f"invalid session key: agent id {parts[1]!r} must match [a-z0-9][a-z0-9_-]{{0,63}}"
            )
        return lowered
    agent = normalize_agent_id(default_agent_id)
    canonical = f"agent:{agent}:{lowered}"
    if len(canonical) > MAX_KEY_LENGTH:
        raise InvalidSessionKey(f"invalid session key: too long (max {MAX_KEY_LENGTH})")
    return canonical


# --- builders --------------------------------------------------------------------------------


def main_session_key(agent_id: str = DEFAULT_AGENT_ID, main_key: str = DEFAULT_MAIN_KEY) -> str:
    return f"agent:{normalize_agent_id(agent_id)}:{main_key.lower()}"


def _child_key(agent_id: str, kind: str, child_id: str | None) -> str:
    ident = str(uuid.uuid4()) if child_id is None else child_id.lower()
    if not ident or ":" in ident or _UNSAFE_CHARS.search(ident):
        raise InvalidSessionKey(f"invalid session key: bad {kind} id {ident!r}")
    key = f"agent:{normalize_agent_id(agent_id)}:{kind}:{ident}"
    if len(key) > MAX_KEY_LENGTH:
        raise InvalidSessionKey(f"invalid session key: too long (max {MAX_KEY_LENGTH})")
    return key


def subagent_session_key(agent_id: str, child_id: str | None = None) -> str:
    """``agent:<agentId>:subagent:<uuid>`` (a fresh UUID v4 unless ``child_id`` is given)."""
    return _child_key(agent_id, "subagent", child_id)


def acp_session_key(agent_id: str, child_id: str | None = None) -> str:
    """``agent:<acpAgentId>:acp:<uuid>``."""
    return _child_key(agent_id, "acp", child_id)


def dashboard_session_key(agent_id: str, child_id: str | None = None) -> str:
    """``agent:<agentId>:dashboard:<uuid>``: a session created without an explicit key."""
    return _child_key(agent_id, "dashboard", child_id)


def cron_session_key(agent_id: str, job_id: str) -> str:
    return _child_key(agent_id, "cron", job_id)


def cron_run_key(agent_id: str, job_id: str, run_id: str) -> str:
    return canonicalize(f"{cron_session_key(agent_id, job_id)}:run:{run_id}")


def thread_session_key(base_key: str, thread_id: str) -> str:
    """``<baseKey>:thread:<threadId>`` with the thread id lower-cased."""
    return canonicalize(f"{canonicalize(base_key)}:thread:{thread_id.lower()}")


# --- session ids -----------------------------------------------------------------------------


def new_session_id() -> str:
    """A fresh session incarnation id (UUID v4)."""
    return str(uuid.uuid4())


def validate_session_id(value: str) -> str:
    """Check a transcript-safe session id; OpenClaw's exact error on failure."""
    if not _SESSION_ID.fullmatch(value):
        raise InvalidField(f"Invalid session ID: {value}")
    return value
