"""The ACP client stack: talking to any ACP agent from the client side (docs/acp-client.md).

``agent_calls`` holds the protocol version, ``initialize`` and the one way a request is awaited
(raced against the agent process exiting, errors as ``AcpClientError``); ``agent_process``
spawns an agent process and connects to its stdio (and stops it, process group and all);
``link`` is a lazily initialised connection sending raw JSON; ``walk`` walks its
``session/list`` pages; ``family_loader`` rebuilds a session's family from them. The acp spawn
runtime (:mod:`clawline.collab.acp`) uses ``agent_calls`` and ``agent_process`` too. A client
library: it imports the ACP SDK and clawline's base modules, nothing of the domain.

The family loader is this package's public API: its functions and types are importable from
``clawline.acp_client`` itself.
"""

from clawline.acp_client.family_loader import (
    INVALID_PAYLOAD,
    NO_SESSION_LIST,
    FamilyFailure,
    FamilyResult,
    FamilySuccess,
    Member,
    get_acp_session_family,
    get_session_family,
    is_native_subagent,
    member_of,
    parse_parent,
    project_family,
)

__all__ = [
    "INVALID_PAYLOAD",
    "NO_SESSION_LIST",
    "FamilyFailure",
    "FamilyResult",
    "FamilySuccess",
    "Member",
    "get_acp_session_family",
    "get_session_family",
    "is_native_subagent",
    "member_of",
    "parse_parent",
    "project_family",
]
