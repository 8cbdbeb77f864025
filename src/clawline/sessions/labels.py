"""Session labels: trimmed, non-empty, at most 512 characters, unique within an agent."""

from __future__ import annotations

from clawline.errors import InvalidLabel, LabelInUse

MAX_LABEL_LENGTH = 512


def normalize_label(value: object) -> str:
    """Return the trimmed label or raise :class:`InvalidLabel` with OpenClaw's exact text."""
    if not isinstance(value, str):
        raise InvalidLabel("invalid label: must be a string")
    trimmed = value.strip()
    if not trimmed:
        raise InvalidLabel("invalid label: empty")
    if len(trimmed) > MAX_LABEL_LENGTH:
        raise InvalidLabel(f"invalid label: too long (max {MAX_LABEL_LENGTH})")
    if "\x00" in trimmed:
        raise InvalidLabel("invalid label: NUL characters are not allowed")
    return trimmed


def label_in_use(label: str) -> LabelInUse:
    return LabelInUse(f"label already in use: {label}")
