"""CONTRIBUTING.md's "Repository layout" stays true: it names every package and top-level module
of ``src/clawline``, nothing that is not there, and in the order of the layers contract."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "clawline"


def layout_section() -> str:
    text = (ROOT / "CONTRIBUTING.md").read_text()
    start = text.index("<!-- BEGIN repository layout")
    return text[start : text.index("<!-- END repository layout -->")]


def bullets() -> list[str]:
    """The names each bullet of the section starts with (``cli/``, ``config.py``, …)."""
    names: list[str] = []
    for line in layout_section().splitlines():
        if line.startswith("- "):
            head = line[2:].split(" — ")[0]
            names += re.findall(r"`([a-z_]+(?:/|\.py))`", head)
    return names


def top_level() -> set[str]:
    packages = {f"{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.name for p in PACKAGE.glob("*.py") if p.name not in {"__init__.py", "__main__.py"}}
    return packages | modules


def test_every_package_and_module_is_described() -> None:
    assert top_level() - set(bullets()) == set()


def test_nothing_described_is_missing() -> None:
    assert set(bullets()) - top_level() == set()


def test_the_layout_is_in_the_order_of_the_layers() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in contracts["contracts"] if c["id"] == "layers"]
    order: list[str] = []
    for layer in layers:
        for module in re.split(r"[|:]", layer):
            name = module.strip().removeprefix("clawline.")
            order.append(f"{name}.py" if (PACKAGE / f"{name}.py").is_file() else f"{name}/")
    described = [name for name in bullets() if name in order]
    assert described == order
