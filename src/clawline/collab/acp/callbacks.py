"""The client object the SDK calls for one agent process: ``session/update`` and permissions.

clawline advertises no client capabilities (no ``fs/*``, no terminals), so an agent works on its
own files and processes; the SDK answers those methods ``-32601``.

- ``session/update``: each notification is handed, as plain JSON (the SDK's model dumped by
  alias), to the listener of the turn in progress — synchronously, without awaiting, so the
  order of the agent's updates is kept (the SDK runs every incoming notification as a task of
  its own). Updates outside a turn (the history ``session/load`` replays, late chunks) are
  dropped.
- ``session/request_permission``: answered by ``acp.permissionMode``: ``approve-all`` picks an
  allow option; ``approve-reads`` allows tool calls of kind ``read`` or ``search`` and rejects
  the rest; ``deny-all`` rejects. Without a fitting option the answer is ``cancelled``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from clawline.config import PermissionMode
from clawline.types import JSONObject

log = logging.getLogger("clawline.collab.acp")

READ_KINDS = frozenset({"read", "search"})
UpdateListener = Callable[[JSONObject], None]

_ALLOW = ("allow_once", "allow_always")
_REJECT = ("reject_once", "reject_always")


def _pick(options: Sequence[PermissionOption], kinds: tuple[str, ...]) -> str | None:
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return None


class RuntimeClient:
    def __init__(self, permission_mode: PermissionMode) -> None:
        self.permission_mode: PermissionMode = permission_mode
        self.session_id: str | None = None
        """The process's ACP session; updates for any other session are dropped."""
        self.replaying = False
        self._listener: UpdateListener | None = None

    def listen(self, listener: UpdateListener | None) -> None:
        """Send the following updates to ``listener`` (``None``: drop them)."""
        self._listener = listener

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        listener = self._listener
        if listener is None or self.replaying or session_id != self.session_id:
            return
        data: JSONObject = update.model_dump(by_alias=True, exclude_none=True, mode="json")
        listener(data)

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        mode = self.permission_mode
        allowed = mode == "approve-all" or (
            mode == "approve-reads" and tool_call.kind is not None and tool_call.kind in READ_KINDS
        )
        option = _pick(options, _ALLOW if allowed else _REJECT)
        log.info(
            "ACP permission for %r (%s): %s",
            tool_call.title,
            tool_call.kind,
            option or "cancelled",
        )
        if option is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(option_id=option, outcome="selected")
        )
