"""The public API is what docs/api.md lists, and nothing else carries ``__all__``."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "clawline"


def documented() -> dict[str, list[str]]:
    """Module → the names docs/api.md lists under its heading, in order."""
    modules: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in (ROOT / "docs" / "api.md").read_text(encoding="utf-8").splitlines():
        heading = re.fullmatch(r"## `(clawline(?:\.\w+)*)`", line)
        if heading:
            current = modules.setdefault(heading.group(1), [])
        elif current is not None and (item := re.match(r"- `(\w+)`", line)):
            current.append(item.group(1))
    return modules


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def defines_all(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(target, ast.Name) and target.id == "__all__"
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
        for node in tree.body
    )


def test_the_page_lists_the_public_modules() -> None:
    modules = documented()
    assert {"clawline.client", "clawline.store", "clawline.testing", "clawline.sessions"} <= set(
        modules
    )
    assert {"clawline.plugins.hookspecs", "clawline.acp_client", "clawline.config"} <= set(modules)
    assert all(names for names in modules.values())


def test_every_listed_name_is_exported_and_every_export_is_listed() -> None:
    for name, names in documented().items():
        module = importlib.import_module(name)
        exported = list(getattr(module, "__all__", []))
        assert sorted(exported) == sorted(names), name
        for attribute in names:
            assert hasattr(module, attribute), f"{name}.{attribute} is gone"


def test_only_the_public_modules_define_all() -> None:
    public = set(documented())
    carrying = {module_name(path) for path in PACKAGE.rglob("*.py") if defines_all(path)}
    assert carrying == public
