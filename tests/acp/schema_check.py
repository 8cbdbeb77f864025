"""Validating recorded ACP traffic against the official v1 JSON schema (vendored in ``schema/``).

Reusable: record ``(sender, message)`` pairs — ``sender`` is ``"client"`` or ``"agent"`` — and
call :func:`traffic_problems`. Every message is checked:

- the envelope against the schema's root (a JSON-RPC 2.0 request, response or notification);
- a request's ``params`` against the ``…Request`` entry whose ``x-method`` is its method, and
  that ``x-side`` names the receiver (a client sends requests the agent handles);
- a notification's ``params`` against the ``…Notification`` entry of its method;
- a response's ``result`` against the ``…Response`` entry of the method of the request with
  the same id (sent the other way), an ``error`` against ``Error``.

Deliberately bad input is allowed: a client request that breaks the schema, or names a method
the schema does not have, is fine as long as the agent answered it with an error (a bad client
notification cannot be answered: the test has to check that it was ignored). Everything the
agent sends must be valid. ``schema.v1.unstable.json`` is used when ``unstable=True``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

__all__ = ["SCHEMA_DIR", "Sender", "check_message", "traffic_problems"]

SCHEMA_DIR = Path(__file__).resolve().parent / "schema"
"""The ACP v1 schemas copied unmodified from upstream (see ``schema/README.md``)."""
Sender = Literal["client", "agent"]
_OTHER: dict[Sender, Sender] = {"client": "agent", "agent": "client"}


@cache
def _schema(unstable: bool) -> dict[str, Any]:
    name = "schema.v1.unstable.json" if unstable else "schema.v1.json"
    loaded: dict[str, Any] = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    return loaded


@cache
def _root(unstable: bool) -> Draft202012Validator:
    return Draft202012Validator(_schema(unstable))


@cache
def _entry(unstable: bool, method: str, suffix: str) -> tuple[str, Draft202012Validator] | None:
    """``(x-side, validator)`` of the ``$defs`` entry for ``method`` ending in ``suffix``."""
    defs = _schema(unstable)["$defs"]
    names = [n for n, d in defs.items() if d.get("x-method") == method and n.endswith(suffix)]
    if not names:
        return None
    assert len(names) == 1, f"several {suffix} entries for {method}: {names}"
    side = str(defs[names[0]].get("x-side"))
    return side, Draft202012Validator({"$ref": f"#/$defs/{names[0]}", "$defs": defs})


@cache
def _error_validator(unstable: bool) -> Draft202012Validator:
    return Draft202012Validator({"$ref": "#/$defs/Error", "$defs": _schema(unstable)["$defs"]})


def _errors(validator: Draft202012Validator, instance: object) -> str | None:
    error = best_match(validator.iter_errors(instance))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return f"{where}: {error.message[:300]}"


def check_message(
    sender: Sender, message: object, method_of_request: str | None, *, unstable: bool = False
) -> str | None:
    """The first problem of one message, or ``None``. ``method_of_request`` is the method of
    the request a response answers (``None`` when unknown)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return f"not a JSON-RPC 2.0 object: {message!r:.200}"
    if (problem := _errors(_root(unstable), message)) is not None:
        return f"envelope: {problem}"
    method = message.get("method")
    if isinstance(method, str):
        suffix = "Request" if "id" in message else "Notification"
        entry = _entry(unstable, method, suffix)
        if entry is None:
            return None if method.startswith("_") else f"{method}: no {suffix} in the schema"
        side, validator = entry
        if suffix == "Request" and side != _OTHER[sender] and side != "protocol":
            return f"{method}: a request the {_OTHER[sender]} does not handle (x-side {side})"
        problem = _errors(validator, message.get("params"))
        return None if problem is None else f"{method} params: {problem}"
    if "error" in message:
        problem = _errors(_error_validator(unstable), message["error"])
        return None if problem is None else f"error object: {problem}"
    if method_of_request is None:
        return f"response to an unknown request id {message.get('id')!r}"
    entry = _entry(unstable, method_of_request, "Response")
    if entry is None:
        return f"result of {method_of_request}, which has no Response in the schema"
    problem = _errors(entry[1], message.get("result"))
    return None if problem is None else f"{method_of_request} result: {problem}"


def traffic_problems(
    traffic: Iterable[tuple[Sender, dict[str, Any]]], *, unstable: bool = False
) -> list[str]:
    """Every problem of a recorded exchange, in order (see the module docstring)."""
    recorded = list(traffic)
    requests: dict[tuple[Sender, object], dict[str, Any]] = {}
    for sender, message in recorded:
        if isinstance(message.get("method"), str) and "id" in message:
            requests[(sender, message["id"])] = message
    refused = {
        message["id"]
        for sender, message in recorded
        if sender == "agent" and "method" not in message and "error" in message
    }
    problems: list[str] = []
    for sender, message in recorded:
        request = None if "method" in message else requests.get((_OTHER[sender], message.get("id")))
        method = None if request is None else request.get("method")
        problem = check_message(sender, message, method, unstable=unstable)
        if problem is None:
            continue
        if sender == "client" and "method" in message:
            if "id" not in message:
                continue  # a bad notification cannot be refused; the test checks it is ignored
            if message["id"] in refused:
                continue  # deliberately bad input, and the agent refused it
        problems.append(f"{sender} → {message!r:.300}: {problem}")
    return problems
