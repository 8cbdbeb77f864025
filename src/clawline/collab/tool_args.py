"""Reading tool arguments: what a model sent, checked against the tool's schema.

Models do not always respect a schema, so each tool checks its arguments itself and answers a
bad one with an error *result* the model can read. A string argument is trimmed; a blank one
counts as absent (OpenClaw's ``readStringParam``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from clawline.errors import InvalidInput
from clawline.types import JSON


class ArgumentError(InvalidInput):
    """An argument breaks the tool's schema; ``str(error)`` is the message for the model."""


class ToolRefusal(InvalidInput):
    """A session tool refuses the call: ``error`` is its result's error text, ``status`` the
    result's status (``error``, ``forbidden``, …), ``session_key`` the session it names, if
    any."""

    def __init__(self, error: str, status: str = "error", session_key: str | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.status = status
        self.session_key = session_key


def optional_string(
    args: Mapping[str, JSON], name: str, *, min_len: int = 0, max_len: int | None = None
) -> str | None:
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ArgumentError(f"{name} must be a string")
    trimmed = value.strip()
    if not trimmed:
        return None
    if len(trimmed) < min_len or (max_len is not None and len(trimmed) > max_len):
        raise ArgumentError(f"{name} must be {min_len} to {max_len} characters")
    return trimmed


def required_string(args: Mapping[str, JSON], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ArgumentError(f"{name} required")
    return value


def optional_int(args: Mapping[str, JSON], name: str, *, minimum: int) -> int | None:
    """A number ``>= minimum`` (a fraction is rounded down, as OpenClaw does)."""
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ArgumentError(f"{name} must be a number >= {minimum}")
    if not math.isfinite(value) or value < minimum:
        raise ArgumentError(f"{name} must be a number >= {minimum}")
    return math.floor(value)


def optional_strings(args: Mapping[str, JSON], name: str) -> list[str] | None:
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ArgumentError(f"{name} must be an array of strings")
    return [item.strip() for item in value if isinstance(item, str) and item.strip()]
