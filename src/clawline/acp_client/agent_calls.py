"""Calling an ACP agent from the client side: the protocol version, ``initialize``, one request
raced against the agent process exiting, and the errors every client operation raises.

Every user of the client stack goes through here: the links of the family loader and
``clawline acp ls`` (:mod:`clawline.acp_client.link`) and the acp spawn runtime's child agents
(:mod:`clawline.collab.acp.child_agent`). So there is one :data:`PROTOCOL_VERSION`, one
:func:`initialize` and one handling of an agent that fails, goes away or exits while a request
is outstanding (:func:`call`). Timeouts are the caller's: the runtime bounds start,
``initialize`` and ``session/new`` together, the web chat bounds a whole family request.
"""

from __future__ import annotations

import asyncio
import contextlib
from asyncio.subprocess import Process
from collections.abc import Awaitable, Mapping
from typing import Any, Final, Protocol, TypeVar

from acp import RequestError

from clawline.errors import Unavailable

PROTOCOL_VERSION: Final = 1
"""The ACP version clawline speaks as a client (the SDK's ``acp.PROTOCOL_VERSION``, pinned)."""
NO_SESSION_LOAD: Final = "ACP agent does not support session/load"
EXIT_GRACE_SECONDS: Final = 1.0
"""How long a dropped connection waits for the process's exit code."""

T = TypeVar("T")


class AcpClientError(Unavailable):
    """An ACP agent failed, went away or lacks what a client operation needs."""


class AgentGone(AcpClientError):
    """The connection to the agent closed, or its process exited, during a request."""


class JsonRpcRequester(Protocol):
    """A connection to send raw JSON-RPC requests on: ``acp.connection.Connection`` is one."""

    async def send_request(self, method: str, params: Any | None = None) -> Any: ...


def error_text(error: RequestError) -> str:
    """The text of a JSON-RPC error: ``data.details`` when it is a non-empty string (OpenClaw
    answers ``Internal error`` and puts the real text there), else the message."""
    data = error.data
    if isinstance(data, dict) and isinstance(data.get("details"), str) and data["details"]:
        return str(data["details"])
    return str(error)


def initialize_params(client_info: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``{"protocolVersion": 1, "clientCapabilities": {}}`` (no ``fs/*``, no terminals), with
    ``clientInfo`` when given."""
    params: dict[str, Any] = {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": {}}
    if client_info is not None:
        params["clientInfo"] = dict(client_info)
    return params


async def initialize(
    requester: JsonRpcRequester,
    process: Process | None,
    *,
    client_info: Mapping[str, str] | None = None,
) -> object:
    """Send ``initialize`` (:func:`initialize_params`) and return the decoded ``result``,
    unvalidated; an exit of ``process`` meanwhile is ``ACP process exited with code N``."""
    return await call(requester.send_request("initialize", initialize_params(client_info)), process)


async def call(request: Awaitable[T], process: Process | None) -> T:
    """Await one request, raced against ``process`` exiting (when known). A JSON-RPC error is an
    :class:`AcpClientError` with :func:`error_text`; a closed connection or an exited process is
    :class:`AgentGone` (with the exit code when there is one). Anything else (an answer the
    SDK's models refuse) propagates unchanged."""
    waiting = asyncio.ensure_future(request)
    exited = None if process is None else asyncio.ensure_future(process.wait())
    try:
        await asyncio.wait(
            {waiting} if exited is None else {waiting, exited},
            return_when=asyncio.FIRST_COMPLETED,
        )
        if waiting.done():
            return waiting.result()
        assert exited is not None
        raise AgentGone(f"ACP process exited with code {exited.result()}")
    except RequestError as error:
        raise AcpClientError(error_text(error)) from error
    except ConnectionError as error:
        raise AgentGone(await _gone_text(process, error)) from error
    finally:
        if exited is not None:
            exited.cancel()
        if not waiting.done():
            waiting.cancel()
        # Retrieved, so a failure that lost the race is not reported as never retrieved.
        with contextlib.suppress(BaseException):
            await waiting


async def _gone_text(process: Process | None, error: ConnectionError) -> str:
    """Prefer the exit code when the connection closed because the process ended."""
    if process is not None:
        with contextlib.suppress(TimeoutError):
            code = await asyncio.wait_for(process.wait(), EXIT_GRACE_SECONDS)
            return f"ACP process exited with code {code}"
    return str(error) or "ACP connection closed"
