"""Closed parameter schemas for gateway methods.

OpenClaw declares its params with ``additionalProperties: false``; so does clawline. A schema is
a mapping from parameter name to a :class:`P` rule; :func:`check` returns the params as a plain
dict or raises :class:`GatewayError` (``INVALID_REQUEST``) naming the first offending key::

    LIST = {"limit": P.integer(min=1), "label": P.string(max_len=512)}
    params = check("sessions.list", raw, LIST)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clawline.gateway.frames import GatewayError


@dataclass(frozen=True, slots=True)
class P:
    """One parameter rule."""

    kind: str
    required: bool = False
    nullable: bool = False
    min: float | None = None
    max: float | None = None
    min_len: int | None = None
    max_len: int | None = None
    choices: tuple[object, ...] | None = None
    items: P | None = None

    @staticmethod
    def string(
        *,
        required: bool = False,
        nullable: bool = False,
        min_len: int | None = None,
        max_len: int | None = None,
        choices: Sequence[str] | None = None,
    ) -> P:
        return P(
            "string",
            required,
            nullable,
            min_len=min_len,
            max_len=max_len,
            choices=tuple(choices) if choices is not None else None,
        )

    @staticmethod
    def integer(
        *,
        required: bool = False,
        nullable: bool = False,
        min: float | None = None,
        max: float | None = None,
    ) -> P:
        return P("integer", required, nullable, min=min, max=max)

    @staticmethod
    def number(
        *,
        required: bool = False,
        nullable: bool = False,
        min: float | None = None,
        max: float | None = None,
    ) -> P:
        return P("number", required, nullable, min=min, max=max)

    @staticmethod
    def boolean(*, required: bool = False, nullable: bool = False) -> P:
        return P("boolean", required, nullable)

    @staticmethod
    def object(*, required: bool = False, nullable: bool = False) -> P:
        return P("object", required, nullable)

    @staticmethod
    def array(
        items: P | None = None,
        *,
        required: bool = False,
        nullable: bool = False,
        max_len: int | None = None,
    ) -> P:
        return P("array", required, nullable, max_len=max_len, items=items)

    @staticmethod
    def anything(*, required: bool = False) -> P:
        return P("any", required, True)


Schema = Mapping[str, P]

_ARTICLE = {"integer": "an", "object": "an", "array": "an", "any": "a"}


def _fail(method: str, message: str) -> GatewayError:
    return GatewayError(f"invalid {method} params: {message}")


def _check_value(method: str, name: str, rule: P, value: Any) -> None:
    if value is None:
        if not rule.nullable:
            raise _fail(method, f"{name} must not be null")
        return
    kind = rule.kind
    ok = {
        "string": isinstance(value, str),
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
        "boolean": isinstance(value, bool),
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "any": True,
    }[kind]
    if not ok:
        raise _fail(method, f"{name} must be {_ARTICLE.get(kind, 'a')} {kind}")
    if rule.choices is not None and value not in rule.choices:
        allowed = ", ".join(repr(choice) for choice in rule.choices)
        raise _fail(method, f"{name} must be one of {allowed}")
    if rule.min is not None and value < rule.min:
        raise _fail(method, f"{name} must be >= {rule.min:g}")
    if rule.max is not None and value > rule.max:
        raise _fail(method, f"{name} must be <= {rule.max:g}")
    if rule.min_len is not None and len(value) < rule.min_len:
        raise _fail(method, f"{name} must have at least {rule.min_len} characters")
    if rule.max_len is not None and len(value) > rule.max_len:
        unit = "items" if kind == "array" else "characters"
        raise _fail(method, f"{name} must have at most {rule.max_len} {unit}")
    if rule.items is not None:
        for index, item in enumerate(value):
            _check_value(method, f"{name}[{index}]", rule.items, item)


def check(method: str, params: object, schema: Schema) -> dict[str, Any]:
    """Validate ``params`` (``None`` counts as ``{}``) against a closed ``schema``."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise _fail(method, "params must be an object")
    for name in params:
        if name not in schema:
            raise _fail(method, f"unknown key {name!r}")
    for name, rule in schema.items():
        if name not in params:
            if rule.required:
                raise _fail(method, f"{name} is required")
            continue
        _check_value(method, name, rule, params[name])
    return params
