"""docs/xworkmate.md documents every method and every message the plugin answers with."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawline.xworkmate.constants import DEFAULT_EXPECTED_ARTIFACT_DIRS, METHOD_NAMES

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "xworkmate.md").read_text(encoding="utf-8")
FLAT_DOC = " ".join(DOC.split())
"""The doc with line breaks as spaces (messages may wrap)."""
SOURCE = "\n".join(
    path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "src" / "clawline" / "xworkmate").glob("*.py"))
)
assert SOURCE, "the plugin's source was not found"

MESSAGES = [
    "schemaVersion must be 1",
    "appThreadKey required",
    "openclawSessionKey required",
    "runId required",
    "expectedArtifactDir must stay inside the workspace",
    "artifactScope must be a task artifact scope",
    "artifactScope does not match sessionKey/runId",
    "artifactScope must stay inside the workspace",
    "workspaceDir must stay inside the configured workspace",
    "workspaceDir must be an absolute path",
    "conflict: xworkmate session mapping already points to a different session",
    "openclawSessionKey or appThreadKey required",
    "artifactScope or artifactRef required",
    "relativePath required",
    "relativePath must stay inside the workspace",
    "relativePath must point to a file",
    "relativePath must not be hard-linked",
    "artifactRef does not match file content",
    "artifactRef does not match relativePath",
    "artifactRef does not match artifactScope",
    "artifactRef does not match workspace",
    "artifactRef does not match sessionKey/runId",
    "invalid artifactRef",
    "artifact scope is not prepared for this task run",
    "ignored unsafe artifact ignore rule: ",
    "ignored unsupported artifact ignore rule: ",
    "skipped symlink ",
    "skipped path outside workspace ",
    "skipped hard-linked file ",
    "skipped non-absolute snapshot source file",
    "skipped referenced source file outside managed staging roots: ",
    "no task-referenced source files supplied; shared media roots were not scanned",
    "action must be list or read",
    "sessionKey required",
    "xworkmate session_start preparation failed: ",
    "the xworkmate plugin has not started",
]


@pytest.mark.parametrize("name", METHOD_NAMES)
def test_every_method_has_a_section(name: str) -> None:
    assert f"### `{name}`\n" in DOC


@pytest.mark.parametrize("message", MESSAGES)
def test_every_message_is_in_the_code_and_the_doc(message: str) -> None:
    assert message in SOURCE
    assert " ".join(message.split()) in FLAT_DOC


def test_the_default_expected_dirs_are_documented() -> None:
    listed = ", ".join(f'"{d}"' for d in DEFAULT_EXPECTED_ARTIFACT_DIRS)
    assert f"[{listed}]" in FLAT_DOC
