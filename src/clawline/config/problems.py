"""What is wrong with a configuration, one line per problem.

Every refusal reads ``config: <key> <what is allowed>``, the key as a dotted path of
config.toml (``agents.list[0].id``, ``models.providers.local.api``)::

    config: agents.defaults.subagents.maxSpawnDepth must be an integer from 1 to 5
    config: tools.sessions.visibility must be "self", "tree", "agent" or "all"

The rule after the key comes from the field itself (:func:`rule_of`: its type and bounds, or an
explicit ``rule`` in its ``json_schema_extra``), so the error lines and the reference
(docs/config.md) say the same thing. A validator that checks more than a type raises
:class:`Refusal` with the text after the key (and, for a model-level check, the sub-key).
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo

from clawline.errors import InvalidInput


class ConfigError(InvalidInput):
    """The configuration file or an environment variable is invalid; ``problems`` holds one
    line per problem and ``str(error)`` all of them, one per line."""

    def __init__(self, *problems: str) -> None:
        self.problems: tuple[str, ...] = problems
        super().__init__("\n".join(problems))


class Refusal(InvalidInput, ValueError):
    """A validator's refusal: ``text`` follows the key (``is listed twice``, ``must be …``);
    ``key`` names a sub-key of the validated value when a model-level check found it."""

    def __init__(self, text: str, *, key: str | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.key = key


def dotted(loc: Sequence[int | str]) -> str:
    """``("agents", "list", 0, "id")`` → ``agents.list[0].id``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def unwrap_annotation(annotation: Any) -> tuple[Any, list[Any]]:
    """The annotation without ``Optional``/``Annotated`` and the metadata found on the way."""
    metadata: list[Any] = []
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation, *extra = get_args(annotation)
            for item in extra:
                metadata.extend(item.metadata if isinstance(item, FieldInfo) else [item])
        elif origin in (Union, types.UnionType):
            rest = [arg for arg in get_args(annotation) if arg is not type(None)]
            if len(rest) != 1:
                return annotation, metadata
            annotation = rest[0]
        else:
            return annotation, metadata


_BOUND_ATTRIBUTE = {
    annotated_types.Ge: "ge",
    annotated_types.Gt: "gt",
    annotated_types.Le: "le",
    annotated_types.MinLen: "min_length",
}


def _bound(metadata: Sequence[Any], kind: type[Any]) -> Any:
    for item in metadata:
        if isinstance(item, kind):
            return getattr(item, _BOUND_ATTRIBUTE[kind])
    return None


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) and not value.is_integer() else f"{value:.0f}"


def _number_rule(noun: str, metadata: Sequence[Any]) -> str:
    kinds = (annotated_types.Ge, annotated_types.Gt, annotated_types.Le)
    ge, gt, le = (_bound(metadata, kind) for kind in kinds)
    ge, gt, le = (None if value is None else _number(value) for value in (ge, gt, le))
    if ge is not None and le is not None:
        return f"{noun} from {ge} to {le}"
    if gt is not None and le is not None:
        return f"{noun} above {gt} and at most {le}"
    if ge is not None:
        return f"{noun} >= {ge}"
    if gt is not None:
        return f"{noun} > {gt}"
    return noun


def _choices(values: Sequence[Any]) -> str:
    quoted = [f'"{value}"' for value in values]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _type_rule(annotation: Any, metadata: list[Any]) -> str:
    annotation, more = unwrap_annotation(annotation)
    metadata = [*metadata, *more]
    origin = get_origin(annotation)
    if annotation is bool:
        return "true or false"
    if annotation is int:
        return _number_rule("an integer", metadata)
    if annotation is float:
        return _number_rule("a number", metadata)
    if annotation is str or annotation is SecretStr:
        min_length = _bound(metadata, annotated_types.MinLen)
        return "a non-empty string" if min_length else "a string"
    if origin is Literal:
        return _choices(get_args(annotation))
    if origin in (tuple, list):
        item, item_metadata = unwrap_annotation(get_args(annotation)[0])
        if isinstance(item, type) and issubclass(item, BaseModel):
            return "an array of tables"
        return f"a list of {_plural(_type_rule(item, item_metadata))}"
    if origin is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return "a table"
    return "valid"


def _plural(rule: str) -> str:
    if rule.startswith("a non-empty string"):
        return "non-empty strings"
    if rule.startswith("a string"):
        return "strings"
    return rule


def rule_of(field: FieldInfo) -> str:
    """What ``field`` allows, in words (``an integer from 1 to 5``, ``true or false``)."""
    extra = field.json_schema_extra
    if isinstance(extra, dict) and isinstance(extra.get("rule"), str):
        return str(extra["rule"])
    return _type_rule(field.annotation, list(field.metadata))


def _field_at(model: type[BaseModel], loc: Sequence[int | str]) -> tuple[FieldInfo | None, int]:
    """The field a validation error's ``loc`` (by alias) ends in, and how much of ``loc`` names
    it: an error in an item of a list or of a table of plain values is the field's."""
    current: Any = model
    found: FieldInfo | None = None
    used = 0
    for index, part in enumerate(loc):
        if isinstance(current, type) and issubclass(current, BaseModel):
            found = _by_alias(current, part)
            if found is None:
                extra = getattr(current, "extra_section", None)
                if extra is None:
                    return None, 0
                current = extra  # a table of extra keys, each holding this model
                continue
            used = index + 1
            current = unwrap_annotation(found.annotation)[0]
        elif get_origin(current) in (dict, tuple, list):
            args = get_args(current)
            current = unwrap_annotation(args[-1] if get_origin(current) is dict else args[0])[0]
            if not (isinstance(current, type) and issubclass(current, BaseModel)):
                return found, used
        else:
            return found, used
    return found, used


def _by_alias(model: type[BaseModel], name: int | str) -> FieldInfo | None:
    for field_name, field in model.model_fields.items():
        if name in (field_name, field.alias) or (
            field.validation_alias is not None
            and name in getattr(field.validation_alias, "choices", [field.validation_alias])
        ):
            return field
    return None


def problems_of(error: ValidationError, model: type[BaseModel], prefix: str = "") -> list[str]:
    """One ``config: …`` line per error of ``error`` (raised validating ``model``; ``prefix``
    is the dotted key of what was validated, when it is not the whole file)."""
    lines: list[str] = []
    for item in error.errors(include_url=False):
        loc = [part for part in item["loc"] if not str(part).startswith("function-")]
        path = dotted([prefix, *loc] if prefix else loc) or "config.toml"
        cause = (item.get("ctx") or {}).get("error")
        if isinstance(cause, Refusal):
            key = path
            if cause.key:
                key += cause.key if cause.key.startswith("[") else f".{cause.key}"
            lines.append(f"config: {key} {cause.text}")
            continue
        if item["type"] == "missing":
            lines.append(f"config: {path} is required")
            continue
        if item["type"] in ("model_type", "dict_type", "model_attributes_type"):
            rule = "a table"
        else:
            field, used = _field_at(model, loc)
            if field is None:
                rule = "valid"
            else:
                rule = rule_of(field)
                path = dotted([prefix, *loc[:used]] if prefix else loc[:used])
        lines.append(f"config: {path} must be {rule}")
    return list(dict.fromkeys(lines))
