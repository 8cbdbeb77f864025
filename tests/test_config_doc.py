"""docs/config.md is the reference of every configuration key, generated from the models."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from pydantic import BaseModel

from clawline.config import ClawlineConfig
from clawline.config.problems import unwrap_annotation
from clawline.config.reference import render

DOC = Path(__file__).resolve().parents[1] / "docs" / "config.md"


def test_the_reference_matches_the_models() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/config.md is stale: python -m clawline.config.reference > docs/config.md"
    )


def _model_of(annotation: object) -> type[BaseModel] | None:
    """The model an annotation holds (itself, an optional one, or a table/array of them)."""
    inner, _ = unwrap_annotation(annotation)
    args = get_args(inner)
    for candidate in (inner, *(unwrap_annotation(arg)[0] for arg in args)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _models(model: type[BaseModel], seen: set[type[BaseModel]]) -> None:
    seen.add(model)
    for field in model.model_fields.values():
        inner = _model_of(field.annotation)
        if inner is not None and inner not in seen:
            _models(inner, seen)


def test_every_key_has_a_meaning() -> None:
    models: set[type[BaseModel]] = set()
    _models(ClawlineConfig, models)
    assert len(models) > 20
    missing = [
        f"{model.__name__}.{name}"
        for model in models
        for name, field in model.model_fields.items()
        if not field.exclude and not field.description and _model_of(field.annotation) is None
    ]
    assert missing == []
