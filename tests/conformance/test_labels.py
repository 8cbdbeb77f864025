"""Label rules: OpenClaw's exact messages, uniqueness per agent, lookups."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from clawline.errors import InvalidLabel, LabelInUse
from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import Store
from clawline.testing import FakeClock

if TYPE_CHECKING:
    from .conftest import Backend


@pytest.mark.parametrize(
    ("label", "message"),
    [
        (7, "invalid label: must be a string"),
        (["a"], "invalid label: must be a string"),
        ("", "invalid label: empty"),
        ("  \t ", "invalid label: empty"),
        ("x" * 513, "invalid label: too long (max 512)"),
        (" " + "y" * 513 + " ", "invalid label: too long (max 512)"),
    ],
)
def test_invalid_labels(
    catalog: SessionCatalog, backend: Backend, label: object, message: str
) -> None:
    catalog.patch("agent:main:a", {"label": "old"})
    before = backend.dump()
    for key in ("agent:main:a", "agent:main:new"):
        with pytest.raises(InvalidLabel) as error:
            catalog.patch(key, {"label": label})
        assert str(error.value) == message
    assert backend.dump() == before


def test_labels_are_trimmed_and_may_be_512_long(catalog: SessionCatalog, store: Store) -> None:
    catalog.patch("agent:main:a", {"label": "  padded  "})
    catalog.patch("agent:main:b", {"label": "z" * 512})
    assert store.get("agent:main:a").label == "padded"  # type: ignore[union-attr]
    assert store.get("agent:main:b").label == "z" * 512  # type: ignore[union-attr]


def test_label_unique_per_agent(catalog: SessionCatalog, backend: Backend) -> None:
    catalog.patch("agent:main:a", {"label": "shared"})
    before = backend.dump()
    with pytest.raises(LabelInUse) as error:
        catalog.patch("agent:main:b", {"label": "shared"})
    assert str(error.value) == "label already in use: shared"
    with pytest.raises(LabelInUse) as error:
        catalog.patch("agent:main:a:thread:t", {"label": "  shared "})
    assert str(error.value) == "label already in use: shared"
    assert backend.dump() == before
    other = catalog.patch("agent:ops:a", {"label": "shared"}).after
    assert other is not None
    assert other.label == "shared"


def test_label_case_matters(catalog: SessionCatalog) -> None:
    catalog.patch("agent:main:a", {"label": "Build"})
    entry = catalog.patch("agent:main:b", {"label": "build"}).after
    assert entry is not None
    assert entry.label == "build"


def test_label_can_be_kept_moved_and_freed(catalog: SessionCatalog, clock: FakeClock) -> None:
    catalog.patch("agent:main:a", {"label": "L"})
    clock.advance(1)
    same = catalog.patch("agent:main:a", {"label": "L", "displayName": "again"}).after
    assert same is not None
    assert same.label == "L"
    catalog.patch("agent:main:a", {"label": None})
    moved = catalog.patch("agent:main:b", {"label": "L"}).after
    assert moved is not None
    assert moved.label == "L"
    catalog.patch("agent:main:b", {"label": "M"})
    assert catalog.patch("agent:main:a", {"label": "L"}).after.label == "L"  # type: ignore[union-attr]


def test_deleting_a_session_frees_its_label(catalog: SessionCatalog) -> None:
    catalog.patch("agent:main:a", {"label": "L"})
    catalog.delete("agent:main:a")
    assert catalog.patch("agent:main:b", {"label": "L"}).after.label == "L"  # type: ignore[union-attr]


def test_by_label(catalog: SessionCatalog, store: Store, clock: FakeClock) -> None:
    catalog.patch("agent:main:a", {"label": "L"})
    clock.advance(1)
    catalog.patch("agent:ops:b", {"label": "L"})
    clock.advance(1)
    catalog.patch("agent:main:c", {"label": "other"})
    assert [e.key for e in catalog.by_label("L")] == ["agent:ops:b", "agent:main:a"]
    assert [e.key for e in catalog.by_label(" L ", "main")] == ["agent:main:a"]
    assert [e.key for e in store.by_label("L", "ops")] == ["agent:ops:b"]
    assert store.by_label("L", "nobody") == []
    assert store.by_label("missing") == []
    with pytest.raises(InvalidLabel) as error:
        catalog.by_label("")
    assert str(error.value) == "invalid label: empty"
