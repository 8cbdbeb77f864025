"""docs/tasks.md documents every tasks method, its params and the task object's fields."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clawline.gateway.methods import tasks
from clawline.gateway.params import Schema
from clawline.records.task import TaskRecord

DOC = Path(__file__).resolve().parents[2] / "docs" / "tasks.md"


def section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"### {title}\n")
    end = text.find("\n#", start + 1)
    return text[start : end if end != -1 else None]


@pytest.mark.parametrize(
    ("method", "schema"),
    [("tasks.list", tasks.LIST), ("tasks.get", tasks.GET), ("tasks.cancel", tasks.CANCEL)],
)
def test_every_param_is_documented(method: str, schema: Schema) -> None:
    text = section(f"`{method}`")
    documented = set(re.findall(r"[{,]\s*([A-Za-z]+)\??", text))
    missing = sorted(set(schema) - documented)
    assert missing == [], f"{method}: undocumented params {missing}"


def test_every_method_served_is_documented() -> None:
    for name in tasks.methods.names():
        assert section(f"`{name}`")


def test_the_task_object_table_lists_every_field_in_order() -> None:
    rows = re.findall(r"^\| `([A-Za-z]+)` \|", section("Task object"), re.M)
    sample = TaskRecord("t", "cli", "", "", "system", "x", "queued", "pending", "silent", 0)
    assert rows == list(sample.to_json())
