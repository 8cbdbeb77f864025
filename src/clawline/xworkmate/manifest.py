"""The Markdown manifest of an artifact result, for the agent tool and
``xworkmate.artifacts.list``::

    ## XWorkmate artifacts

    Workspace: `/srv/clawline/workspace/main`
    Artifact scope: `tasks/agent_main_main/turn-1`

    | File | Type | Size | SHA-256 | Inline |
    | --- | --- | ---: | --- | --- |
    | `reports/final.md` | text/markdown | 1.2 KiB | `3f2a9c01b7de` | no |

    Warnings:
    - …
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from clawline.types import JSON

EMPTY = "No artifacts found for this task run."


def format_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def manifest_markdown(result: Mapping[str, JSON]) -> str:
    """Markdown for an export, list or read result."""
    lines = [
        "## XWorkmate artifacts",
        "",
        f"Workspace: `{result.get('remoteWorkingDirectory')}`",
        f"Artifact scope: `{result.get('artifactScope')}`",
        "",
    ]
    artifacts = result.get("artifacts")
    rows = [a for a in artifacts if isinstance(a, Mapping)] if isinstance(artifacts, list) else []
    if not rows:
        lines.append(EMPTY)
    else:
        lines.append("| File | Type | Size | SHA-256 | Inline |")
        lines.append("| --- | --- | ---: | --- | --- |")
        for artifact in rows:
            size = artifact.get("sizeBytes")
            inline = "yes" if artifact.get("encoding") == "base64" else "no"
            lines.append(
                f"| `{_cell(artifact.get('relativePath'))}` | {_cell(artifact.get('contentType'))}"
                f" | {format_size(size if isinstance(size, int) else 0)}"
                f" | `{str(artifact.get('sha256'))[:12]}` | {inline} |"
            )
    warnings = result.get("warnings")
    if isinstance(warnings, Sequence) and not isinstance(warnings, str) and warnings:
        lines.extend(["", "Warnings:"])
        lines.extend(f"- {warning}" for warning in warnings)
    return "\n".join(lines)
