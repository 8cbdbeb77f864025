"""Tool call ids a turn can use as durable keys (a spawn is keyed by its call id,
:mod:`clawline.collab.spawn_key`).

Real providers give unique ids (OpenAI ``call_…``, Anthropic ``toolu_…``), but some
OpenAI-compatible servers number them per reply (``call_0``, ``call_1``…), so an id can come
back in a later turn for another call. :class:`CallIds` looks at the history the turn read
(converted: :func:`~clawline.agents.conversation.convert_all`) and gives each new call an id
no other call of the conversation has:

- a new id is kept;
- an id whose call has a result already (a result of its own: not the ``interrupted``
  stand-in of an abort), or that an earlier call of this turn took, is rewritten to the first
  free one of ``<id>-dup1``, ``<id>-dup2``, … (deterministic: the same history gives the same
  id);
- an id whose call has no result — a turn cut off by a crash, or by an abort after the tool
  started — is kept when the new call is the same call (name and arguments): that is the redo,
  and it must reach the same key to find what the first attempt did. Another call with that id
  is rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from clawline.agents.providers.base import ModelMessage, ToolCall
from clawline.types import JSON

DUPLICATE_SUFFIX = "-dup"
"""``<id>-dup<n>``: only characters every provider accepts in an id (Anthropic allows
``[A-Za-z0-9_-]``)."""

_Signature = tuple[str, dict[str, JSON]]


class CallIds:
    """The call ids of one conversation (module docstring)."""

    def __init__(self, history: Sequence[ModelMessage]) -> None:
        self._taken: set[str] = set()
        """Ids whose call has a result of its own, or that this turn gave out."""
        self._open: dict[str, _Signature] = {}
        """Ids whose latest call has no result yet: that call's name and arguments."""
        for message in history:
            if message.role == "assistant":
                for call in message.tool_calls:
                    if call.id not in self._taken:
                        self._open[call.id] = _signature(call)
            elif message.role == "tool":
                call_id = message.tool_call_id
                if call_id is not None and not message.interrupted:
                    self._taken.add(call_id)
                    self._open.pop(call_id, None)

    def assign(self, call: ToolCall) -> ToolCall:
        """``call`` with the id it should run under; that id is then taken."""
        chosen = call.id
        count = 0
        while not self._free(chosen, call):
            count += 1
            chosen = f"{call.id or 'call'}{DUPLICATE_SUFFIX}{count}"
        self._taken.add(chosen)
        self._open.pop(chosen, None)
        return call if chosen == call.id else replace(call, id=chosen)

    def _free(self, call_id: str, call: ToolCall) -> bool:
        if not call_id or call_id in self._taken:
            return False
        opened = self._open.get(call_id)
        return opened is None or opened == _signature(call)


def _signature(call: ToolCall) -> _Signature:
    return call.name, dict(call.arguments)
