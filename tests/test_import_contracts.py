"""The layer contracts of ``pyproject.toml`` (import-linter, run by ``scripts/check``) hold on the
source, and each of them can fail: a wrong import planted in a temporary copy of the source breaks
the contract it offends."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
CONTRACTS = ("layers", "domain-without-adapters", "acyclic-packages")


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package and of the contracts, checked where nothing else is importable."""
    root = tmp_path_factory.mktemp("contracts")
    shutil.copytree(
        ROOT / "src" / "clawline",
        root / "src" / "clawline",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


def lint(root: Path, contract: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", "--contract", contract],
        cwd=root,
        env={"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def plant(copy: Path) -> Iterator[object]:
    """``plant(module, imported)``: add ``import imported`` to ``module`` of the copy (undone
    after the test)."""
    planted: dict[Path, str] = {}

    def add(module: str, imported: str) -> None:
        path = copy / "src" / Path(*module.split(".")).with_suffix(".py")
        planted.setdefault(path, path.read_text())
        with path.open("a") as file:
            file.write(f"\nimport {imported}  # planted\n")

    yield add
    for path, text in planted.items():
        path.write_text(text)


@pytest.mark.parametrize("contract", CONTRACTS)
def test_the_source_keeps_every_contract(copy: Path, contract: str) -> None:
    result = lint(copy, contract)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("contract", "module", "imported"),
    [
        # a lower layer importing a higher one
        ("layers", "clawline.store.base", "clawline.collab.announce"),
        ("layers", "clawline.sessions.catalog", "clawline.agents.run_manager"),
        ("layers", "clawline.runtime", "clawline.gateway.app"),
        ("layers", "clawline.collab.announce", "clawline.xworkmate"),
        ("layers", "clawline.acp_client.walk", "clawline.collab.spawn"),
        ("layers", "clawline.errors", "clawline.types"),  # independent siblings
        # the domain and the core reaching an adapter or the composition root
        ("domain-without-adapters", "clawline.tasks.registry", "clawline.gateway.frames"),
        ("domain-without-adapters", "clawline.collab.spawn", "clawline.acp.bridge_agent"),
        ("domain-without-adapters", "clawline.store.workers", "clawline.runtime"),
        ("domain-without-adapters", "clawline.plugins.host", "clawline.testing"),
        # a cycle between sibling packages or modules
        ("acyclic-packages", "clawline.collab.spawn_acp_plan", "clawline.collab.acp.router"),
        ("acyclic-packages", "clawline.gateway.frames", "clawline.gateway.app"),
        ("acyclic-packages", "clawline.sessions.labels", "clawline.sessions.catalog"),
    ],
)
def test_a_planted_import_breaks_its_contract(
    copy: Path, plant: object, contract: str, module: str, imported: str
) -> None:
    assert callable(plant)
    plant(module, imported)
    result = lint(copy, contract)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "0 kept, 1 broken" in result.stdout
    assert f"{module} -> {imported}" in result.stdout or contract == "acyclic-packages"
