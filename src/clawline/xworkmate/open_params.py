"""Reading the plugin's open params: strings, numbers and flags as the upstream plugin reads
them, and the errors its methods answer with.

Callers (the XWorkmate bridge) spread extra fields into every request, so params are open
objects; each method picks the fields it knows. A string field may arrive as a number or a
boolean and is read as its text; ``"<nil>"`` (a Go zero value that leaked through) counts as
missing. Numeric options that are missing or invalid fall through to the next source (plugin
config, then the default), as upstream does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from clawline.errors import Conflict, InvalidInput


class XWorkmateError(InvalidInput):
    """A request the plugin refuses; the message is the upstream plugin's exact text."""


class XWorkmateConflict(Conflict):
    """A session mapping that already points elsewhere (answered with code ``CONFLICT``)."""


def optional_string(value: object) -> str:
    """``value`` as trimmed text: strings, numbers and booleans; anything else is ``""``."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            return ""
        text = str(int(value)) if value.is_integer() else repr(value)
    elif isinstance(value, str):
        text = value.strip()
    else:
        return ""
    return "" if text == "<nil>" else text


def required_string(value: object, message: str) -> str:
    text = optional_string(value)
    if not text:
        raise XWorkmateError(message)
    return text


def record(value: object) -> dict[str, Any] | None:
    """``value`` when it is a JSON object, else ``None``."""
    return dict(value) if isinstance(value, Mapping) else None


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and value.strip():
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def positive_int(*candidates: object, default: int) -> int:
    """The first candidate that is a whole number > 0, else ``default``."""
    for candidate in candidates:
        number = _number(candidate)
        if number is not None and number.is_integer() and number > 0:
            return int(number)
    return default


def non_negative_int(*candidates: object, default: int) -> int:
    """The first candidate that is a whole number >= 0, else ``default``."""
    for candidate in candidates:
        number = _number(candidate)
        if number is not None and number.is_integer() and number >= 0:
            return int(number)
    return default


def non_negative_number(value: object, default: float) -> float:
    number = _number(value)
    return number if number is not None and number >= 0 else default


def optional_bool(value: object, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return default
