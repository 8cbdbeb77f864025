"""JSON-RPC 2.0 envelopes of the lines the bridge reads: what reaches the SDK, what is refused.

The SDK's :class:`acp.connection.Connection` trusts every decoded object: it dispatches on
``method is not None`` and ``"id" in message`` and hands ``method`` to the handler unchecked,
so ``"method": []`` reached the method table (a ``TypeError``, answered ``-32603``) and
``"method": null`` with an id was taken for a response to a request never sent (no answer at
all). It has no hook before dispatch, so the transport (:mod:`clawline.acp.ndjson`) applies
:func:`decode` to every line and answers a :class:`Refusal` itself; only valid envelopes take
the SDK's path.

- a line that is not JSON (truncated, invalid UTF-8, nested deeper than orjson's 1,024
  levels, longer than the line limit): ``-32700 Parse error``, ``id: null``;
- JSON that is not a valid Request object (not an object, ``jsonrpc`` not ``"2.0"``,
  ``method`` missing or not a string, an ``id`` that is not a string, an int64 integer or
  null, ``params`` neither object, array nor null): ``-32600 Invalid Request``, with the
  request's ``id`` when that is a valid id, else ``null``. Such an object is answered even
  without an ``id``: JSON-RPC's notification (never answered) is a valid Request object
  without an ``id``, and its own example answers ``{"jsonrpc": "2.0", "method": 1,
  "params": "bar"}`` with ``id: null``;
- a batch (a JSON array): ACP sends one message per line and never batches; the whole line is
  refused with one ``-32600`` (``id: null``, as the ACP TypeScript SDK answers) and nothing in
  it runs;
- a response from the client (no ``method``, a ``result`` or an ``error``) that is malformed
  is dropped and logged, never answered: answering a response could make two peers answer
  each other forever.

``params: null`` is accepted as absent: the ACP schema allows it and the SDK sends it for a
request without params. Each refusal's ``data.details`` says what was wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import orjson

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
_MESSAGES: Final = {PARSE_ERROR: "Parse error", INVALID_REQUEST: "Invalid Request"}
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1

RequestId = str | int | None
"""ACP's ``RequestId``: a string, an int64 integer or null."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """A line the bridge answers itself, with a JSON-RPC error."""

    code: int
    details: str
    id: RequestId = None

    def answer(self) -> dict[str, Any]:
        error = {
            "code": self.code,
            "message": _MESSAGES[self.code],
            "data": {"details": self.details},
        }
        return {"jsonrpc": "2.0", "id": self.id, "error": error}


@dataclass(frozen=True, slots=True)
class Dropped:
    """A malformed response from the client: logged, not answered."""

    details: str


def is_request_id(value: object) -> bool:
    if value is None or type(value) is str:
        return True
    return type(value) is int and _INT64_MIN <= value <= _INT64_MAX


def overlong(limit: int) -> Refusal:
    return Refusal(PARSE_ERROR, f"message line longer than {limit} bytes; discarded")


def _parse(line: bytes | bytearray) -> object | Refusal:
    try:
        message: object = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        # orjson's text names the problem ("unexpected end of data", "depth limit exceeded",
        # "str is not valid UTF-8: …") without quoting the line, which may hold secrets.
        return Refusal(PARSE_ERROR, f"not valid JSON: {error.msg}")
    return message


def _response(message: dict[str, Any]) -> Dropped | None:
    if message.get("jsonrpc") != "2.0":
        return Dropped('a response whose jsonrpc is not "2.0"')
    if "id" not in message or not is_request_id(message["id"]):
        return Dropped("a response without a valid id")
    if ("result" in message) == ("error" in message):
        return Dropped("a response with both result and error")
    return None


def _check(message: object) -> Refusal | Dropped | None:
    if type(message) is list:
        return Refusal(INVALID_REQUEST, "batches are not supported: ACP sends one message per line")
    if type(message) is not dict:
        return Refusal(INVALID_REQUEST, "a JSON-RPC message must be an object")
    has_id = "id" in message
    valid_id = not has_id or is_request_id(message["id"])
    answer_id: RequestId = message["id"] if has_id and valid_id else None
    if "method" not in message and ("result" in message or "error" in message):
        return _response(message)
    if message.get("jsonrpc") != "2.0":
        return Refusal(INVALID_REQUEST, 'jsonrpc must be "2.0"', answer_id)
    if "method" not in message:
        return Refusal(INVALID_REQUEST, "method is missing", answer_id)
    if type(message["method"]) is not str:
        return Refusal(INVALID_REQUEST, "method must be a string", answer_id)
    if not valid_id:
        return Refusal(INVALID_REQUEST, "id must be a string, an int64 integer or null")
    params = message.get("params")
    if params is not None and type(params) is not dict and type(params) is not list:
        return Refusal(INVALID_REQUEST, "params must be an object or an array", answer_id)
    return None


def decode(line: bytes | bytearray) -> dict[str, Any] | Refusal | Dropped:
    """One line (without its newline): the message for the SDK, or why it does not get there."""
    message = _parse(line)
    if isinstance(message, Refusal):
        return message
    problem = _check(message)
    if problem is not None:
        return problem
    assert type(message) is dict
    return message
