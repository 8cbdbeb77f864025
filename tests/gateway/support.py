"""Small helpers shared by gateway tests."""

from __future__ import annotations

from typing import Any

__all__ = ["without_details"]


def without_details(error: dict[str, Any]) -> dict[str, Any]:
    """An error object's ``code`` and ``message`` (``details`` varies with the error class)."""
    return {key: value for key, value in error.items() if key != "details"}
