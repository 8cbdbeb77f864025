"""Checks of the values a task is created or changed with: each refusal is an
:class:`~clawline.errors.InvalidField` naming the field by its OpenClaw name."""

from __future__ import annotations

from clawline.errors import InvalidField

MAX_TEXT = 100_000
"""Bound on free text (task, summaries, error) stored with a task."""
MAX_NAME = 512
"""Bound on ids, keys and labels stored with a task."""


def choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise InvalidField(f"invalid {name}: {value!r} (use one of {', '.join(allowed)})")
    return value


def text(name: str, value: object, *, limit: int = MAX_NAME, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise InvalidField(f"invalid {name}: expected a non-empty string")
    if len(value) > limit:
        raise InvalidField(f"invalid {name}: longer than {limit} characters")
    return value


def optional(name: str, value: object, *, limit: int = MAX_NAME) -> str | None:
    return None if value is None else text(name, value, limit=limit)
