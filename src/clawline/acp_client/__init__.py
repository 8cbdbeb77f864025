"""The ACP client stack: talking to any ACP agent from the client side (docs/acp-client.md).

``agent_calls`` holds the protocol version, ``initialize`` and the one way a request is awaited
(raced against the agent process exiting, errors as ``AcpClientError``); ``agent_process``
spawns an agent process and connects to its stdio (and stops it, process group and all);
``link`` is a lazily initialised connection sending raw JSON; ``walk`` walks its
``session/list`` pages; ``family_loader`` rebuilds a session's family from them. The acp spawn
runtime (:mod:`clawline.collab.acp`) uses ``agent_calls`` and ``agent_process`` too. A client
library: it imports the ACP SDK and clawline's base modules, nothing of the domain.

This package's public API, importable from ``clawline.acp_client`` itself: the family loader,
the link it reads through (:func:`spawned_agent`, :class:`AgentLink`), the protocol version and
the error every failed call raises (docs/api.md).
"""

from clawline.acp_client.agent_calls import PROTOCOL_VERSION, AcpClientError
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
from clawline.acp_client.link import AgentLink, spawned_agent

__all__ = [
    "INVALID_PAYLOAD",
    "NO_SESSION_LIST",
    "PROTOCOL_VERSION",
    "AcpClientError",
    "AgentLink",
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
    "spawned_agent",
]
