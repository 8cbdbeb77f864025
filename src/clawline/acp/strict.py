"""Rules of the ACP schema that the SDK's pydantic request models do not enforce.

- ``initialize``: ``protocolVersion`` is an integer 0..65535 (schema ``ProtocolVersion``). The
  SDK's model maps anything it cannot read as an integer to 1 (some clients once sent a date
  string), and ``"2"``, ``true`` or ``1.5`` to an integer; the bridge refuses all of them.
- ``session/new``, ``session/load``, ``session/resume``: ``cwd`` is absolute, as ``session/list``
  already required (its text is OpenClaw's ``ACP session/list requires an absolute cwd.``; the
  others name their own method).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any, Final

from clawline.acp.rpc_errors import invalid_params

BAD_PROTOCOL_VERSION: Final = "protocolVersion must be an integer from 0 to 65535"
_MAX_PROTOCOL_VERSION: Final = 65535


def check_protocol_version(params: Mapping[str, Any]) -> None:
    """Raises ``-32602`` unless ``params.protocolVersion`` is a JSON integer 0..65535."""
    value = params.get("protocolVersion")
    if type(value) is not int or not 0 <= value <= _MAX_PROTOCOL_VERSION:
        raise invalid_params(BAD_PROTOCOL_VERSION)


def relative_cwd(method: str) -> str:
    return f"ACP {method} requires an absolute cwd."


def require_absolute_cwd(method: str, cwd: str) -> None:
    """Raises ``-32602`` (:func:`relative_cwd`) unless ``cwd`` is an absolute POSIX path."""
    if not posixpath.isabs(cwd):
        raise invalid_params(relative_cwd(method))
