"""docs/config.md, written from the models of :mod:`clawline.config.schema`.

Every table of config.toml is a section of the page, every key a row: its name, what it
allows (the same words a refusal uses, :func:`~clawline.config.problems.rule_of`), its default
and its meaning (the attribute's docstring). ``tests/test_config_doc.py`` fails when the page
and the models differ; rewrite the page with::

    python -m clawline.config.reference > docs/config.md
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from clawline.config.problems import rule_of, unwrap_annotation
from clawline.config.schema import ClawlineConfig

_HEADER = """\
# Configuration reference

clawline reads `<state dir>/config.toml` (the state directory is `$CLAWLINE_STATE_DIR`, else
`~/.clawline`) once, when it starts. Keys are OpenClaw's camelCase names, so one file can serve
both; keys clawline does not know are ignored. Values are checked strictly: a number in quotes
is a string, `1` is not `true`. Every problem is one line naming its key:

```text
config: agents.defaults.subagents.maxSpawnDepth must be an integer from 1 to 5
```

- `clawline config check` prints every problem of the file (and of the gateway options it
  implies) and exits 1; a good file prints nothing and exits 0.
- `clawline config show` prints the effective configuration, defaults included, as TOML
  (`--json` for JSON); secrets (`apiKey`, `token`, `artifactRefSigningSecret`, the ACP agents'
  `env` values) are masked.

Environment variables win over the file: `CLAWLINE_STORE_URL` over `store.url`;
`CLAWLINE_GATEWAY_PORT`, `CLAWLINE_GATEWAY_BIND` and `CLAWLINE_GATEWAY_TOKEN` over `[gateway]`
(and the `clawline gateway` options over both).

This page is generated from the models in `clawline/config/schema.py`
(`python -m clawline.config.reference > docs/config.md`); a test keeps it true.
"""


def _key(name: str, field: FieldInfo) -> str:
    alias = field.alias or name
    choices = getattr(field.validation_alias, "choices", None)
    if choices:
        alias = str(choices[0])
        others = [str(choice) for choice in choices[1:]]
        return f"`{alias}` (also `{'`, `'.join(others)}`)"
    return f"`{alias}`"


def _alias(name: str, field: FieldInfo) -> str:
    choices = getattr(field.validation_alias, "choices", None)
    return str(choices[0]) if choices else field.alias or name


def _default(field: FieldInfo) -> str:
    value = field.default
    if value is PydanticUndefined:
        return "required"
    if value is None:
        return "—"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, tuple | list):
        return "`[]`" if not value else f"`{list(value)}`"
    if isinstance(value, dict):
        return "`{}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, float) and value.is_integer():
        return f"`{value:.0f}`"
    return f"`{value}`"


def _meaning(field: FieldInfo) -> str:
    return _markdown(field.description or "").replace("|", "\\|")


def _markdown(text: str) -> str:
    """A docstring as one Markdown line (reST's double backticks made single)."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text)
    return re.sub(r"\s+", " ", text).strip().replace("``", "`")


def _doc(model: type[BaseModel]) -> str:
    return _markdown(model.__doc__ or "")


def _tables(model: type[BaseModel], path: str) -> Iterator[tuple[str, type[BaseModel], bool]]:
    """``(dotted table name, model, array of tables)`` for ``model`` and every table in it."""
    yield path, model, False
    extra = getattr(model, "extra_section", None)
    if isinstance(extra, type) and issubclass(extra, BaseModel):
        yield from _tables(extra, f"{path}.<name>")
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        annotation, _ = unwrap_annotation(field.annotation)
        key = f"{path}.{_alias(name, field)}" if path else _alias(name, field)
        origin = get_origin(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _tables(annotation, key)
        elif origin is dict:
            item, _ = unwrap_annotation(get_args(annotation)[1])
            if isinstance(item, type) and issubclass(item, BaseModel):
                yield from _tables(item, f"{key}.<name>")
        elif origin in (tuple, list):
            item, _ = unwrap_annotation(get_args(annotation)[0])
            if isinstance(item, type) and issubclass(item, BaseModel):
                for inner, inner_model, _array in _tables(item, key):
                    yield inner, inner_model, inner == key


def _is_table(field: FieldInfo) -> bool:
    annotation, _ = unwrap_annotation(field.annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    args = get_args(annotation)
    item = args[-1] if get_origin(annotation) is dict else args[0] if args else None
    item, _ = unwrap_annotation(item) if item is not None else (None, [])
    return get_origin(annotation) in (dict, tuple, list) and (
        isinstance(item, type) and issubclass(item, BaseModel)
    )


def render() -> str:
    """The whole of docs/config.md."""
    out = [_HEADER]
    for path, model, array in _tables(ClawlineConfig, ""):
        rows = [
            (name, field)
            for name, field in model.model_fields.items()
            if not field.exclude and not _is_table(field)
        ]
        if not path or not rows:
            continue
        heading = f"[[{path}]]" if array else f"[{path}]"
        out.append(f"\n## `{heading}`\n")
        if _doc(model):
            out.append(f"\n{_doc(model)}\n")
        out.append("\n| key | allowed | default | meaning |\n|---|---|---|---|\n")
        for name, field in rows:
            rule = rule_of(field).replace("|", "\\|")
            out.append(
                f"| {_key(name, field)} | {rule} | {_default(field)} | {_meaning(field)} |\n"
            )
    return "".join(out)


if __name__ == "__main__":
    sys.stdout.write(render())
