"""A tiny ACP agent on the SDK's agent side, run as a real subprocess by the acp runtime tests.

Each prompt streams ``tiny heard: `` and the prompt text as ``agent_message_chunk``s, one tool
call (``tool_call`` ``echo``, kind ``read``, then ``tool_call_update`` ``completed`` with the text
``echoed <text>``) and a last chunk `` done.``; it answers ``end_turn``. Lines of the prompt text
change that:

- ``sleep <ms>``: wait before answering (``session/cancel`` ends the wait: ``cancelled``);
- ``deaf``: with ``sleep``, ignore ``session/cancel``;
- ``fail: <text>``: answer the prompt with a JSON-RPC error whose ``data.details`` is ``<text>``;
- ``crash``: exit with code 5 in the middle of the turn;
- ``ask <kind>``: ask the client's permission for a tool call of that kind first, and say
  ``permission: <optionId|cancelled>``.

Environment: ``TINY_LOG`` names a JSONL file receiving ``{"pid": n}`` at start, ``{"call":
<method>, "params": {…}}`` for every request and notification handled, and ``{"exit": true}``
at the end; ``TINY_LOAD=0`` drops ``loadSession``; ``TINY_CLOSE=1`` advertises
``sessionCapabilities.close``; ``TINY_STUBBORN=1`` ignores SIGTERM and stdin EOF (only SIGKILL
ends it); ``TINY_EXIT_AT_START=<code>`` exits at once with that code.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from typing import Any, cast

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    run_agent,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_tool_call,
    update_user_message_text,
)
from acp.interfaces import Agent, Client
from acp.schema import (
    AgentCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    ToolCallUpdate,
    ToolKind,
)

LOG = os.environ.get("TINY_LOG")


def record(entry: dict[str, Any]) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as file:
            file.write(json.dumps(entry, default=str) + "\n")


def _text(blocks: list[Any]) -> str:
    return "".join(getattr(block, "text", "") for block in blocks)


class TinyAgent:
    def __init__(self) -> None:
        self._client: Client | None = None
        self._turns = 0
        self._cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    @property
    def client(self) -> Client:
        assert self._client is not None
        return self._client

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        record({"call": "initialize", "params": {"protocolVersion": protocol_version}})
        sessions = SessionCapabilities(
            close=SessionCloseCapabilities() if os.environ.get("TINY_CLOSE") == "1" else None
        )
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=os.environ.get("TINY_LOAD", "1") == "1",
                session_capabilities=sessions,
            ),
            agent_info=Implementation(name="tiny", version="1.0"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        session_id = f"tiny-{os.getpid()}-{len(self._cancelled)}"
        self._cancelled[session_id] = asyncio.Event()
        record({"call": "session/new", "params": {"cwd": cwd, "sessionId": session_id}})
        return NewSessionResponse(session_id=session_id)

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        record({"call": "session/load", "params": {"cwd": cwd, "sessionId": session_id}})
        self._cancelled[session_id] = asyncio.Event()
        # the history replay, which must not become part of any turn
        await self.client.session_update(session_id, update_user_message_text("old question"))
        await self.client.session_update(session_id, update_agent_message_text("old answer"))
        return LoadSessionResponse()

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        record({"call": "session/close", "params": {"sessionId": session_id}})
        return CloseSessionResponse()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        record({"call": "session/cancel", "params": {"sessionId": session_id}})
        self._cancelled.setdefault(session_id, asyncio.Event()).set()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = _text(prompt)
        record({"call": "session/prompt", "params": {"sessionId": session_id, "text": text}})
        cancelled = self._cancelled.setdefault(session_id, asyncio.Event())
        cancelled.clear()
        lines = [line.strip() for line in text.splitlines()]
        say = self._say(session_id)
        for line in lines:
            if line.startswith("fail:"):
                raise RequestError.internal_error({"details": line[5:].strip()})
            if line.startswith("ask "):
                await say(f"permission: {await self._ask(session_id, line[4:].strip())}\n")
        await say("tiny heard: ")
        await say(text)
        self._turns += 1
        call_id = f"t{self._turns}"
        await self.client.session_update(
            session_id,
            start_tool_call(
                call_id, "echo", kind="read", status="in_progress", raw_input={"text": text}
            ),
        )
        await self.client.session_update(
            session_id,
            update_tool_call(
                call_id, status="completed", content=[tool_content(text_block(f"echoed {text}"))]
            ),
        )
        if "crash" in lines:
            os._exit(5)
        for line in lines:
            waited = line.startswith("sleep ")
            if waited and await self._sleep(int(line[6:]), cancelled, deaf="deaf" in lines):
                return PromptResponse(stop_reason="cancelled")
        await say(" done.")
        return PromptResponse(stop_reason="end_turn")

    def _say(self, session_id: str) -> Any:
        async def say(chunk: str) -> None:
            await self.client.session_update(session_id, update_agent_message_text(chunk))

        return say

    async def _sleep(self, ms: int, cancelled: asyncio.Event, *, deaf: bool) -> bool:
        """Wait ``ms``; whether a cancel ended the wait."""
        if deaf:
            await asyncio.sleep(ms / 1000)
            return False
        try:
            await asyncio.wait_for(cancelled.wait(), ms / 1000)
        except TimeoutError:
            return False
        return True

    async def _ask(self, session_id: str, kind: str) -> str:
        answer = await self.client.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(
                tool_call_id="p1", title=f"{kind} something", kind=cast(ToolKind, kind)
            ),
            options=[
                PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            ],
        )
        outcome = answer.outcome
        return str(getattr(outcome, "option_id", None) or outcome.outcome)


async def main() -> None:
    record({"pid": os.getpid()})
    code = os.environ.get("TINY_EXIT_AT_START")
    if code is not None:
        sys.exit(int(code))
    stubborn = os.environ.get("TINY_STUBBORN") == "1"
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    await run_agent(cast(Agent, TinyAgent()), use_unstable_protocol=True)
    record({"exit": True})
    if stubborn:
        while True:
            await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main())
