"""A ``session/prompt``'s content blocks → the gateway's ``chat.send`` message and attachments.

- ``text`` → its text;
- ``resource_link`` → a line ``[<title or name>](<uri>)``;
- ``resource`` (embedded, ``promptCapabilities.embeddedContext``) with text → ``[Resource:
  <uri>]`` and the text on the lines below; with a blob → a file attachment;
- ``image`` (``promptCapabilities.image``) → an image attachment;
- ``audio`` is refused (not advertised).

The text parts are joined with newlines. The message may be at most 2 MiB of UTF-8
(OpenClaw's limit and text); unless ``prefixCwd`` is false it starts with
``[Working directory: <cwd>]`` and a blank line, the session's working directory with the home
directory shown as ``~``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
)

from clawline.acp.rpc_errors import invalid_params

MAX_PROMPT_BYTES = 2 * 1024 * 1024
CWD_PREFIX = "[Working directory: {cwd}]\n\n"
_PREFIX_START = "[Working directory: "

Block = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


@dataclass(frozen=True, slots=True)
class PromptInput:
    message: str
    attachments: list[dict[str, Any]] = field(default_factory=list)


def _display_cwd(cwd: str) -> str:
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and (cwd == home or cwd.startswith(home + os.sep)):
        return "~" + cwd[len(home) :]
    return cwd


def _file_name(uri: str) -> str | None:
    name = uri.rstrip("/").rsplit("/", 1)[-1]
    return name or None


def _attachment(kind: str, data: str, mime: str | None, name: str | None) -> dict[str, Any]:
    attachment: dict[str, Any] = {"type": kind, "content": data}
    if mime:
        attachment["mimeType"] = mime
    if name:
        attachment["fileName"] = name
    return attachment


def prompt_input(blocks: Sequence[Block], cwd: str, *, prefix_cwd: bool) -> PromptInput:
    parts: list[str] = []
    attachments: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[{block.title or block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, BlobResourceContents):
                attachments.append(
                    _attachment("file", resource.blob, resource.mime_type, _file_name(resource.uri))
                )
            else:
                parts.append(f"[Resource: {resource.uri}]\n{resource.text}")
        elif isinstance(block, ImageContentBlock):
            name = _file_name(block.uri) if block.uri else None
            attachments.append(_attachment("image", block.data, block.mime_type, name))
        else:
            raise invalid_params("audio prompts are not supported")
    text = "\n".join(parts)
    if len(text) > MAX_PROMPT_BYTES // 4 and len(text.encode("utf-8")) > MAX_PROMPT_BYTES:
        raise invalid_params(f"Prompt exceeds maximum allowed size of {MAX_PROMPT_BYTES} bytes")
    if prefix_cwd:
        text = CWD_PREFIX.format(cwd=_display_cwd(cwd)) + text
    return PromptInput(text, attachments)


def strip_cwd_prefix(text: str) -> str:
    """The user's text without the bridge's own ``[Working directory: …]`` first line."""
    if not text.startswith(_PREFIX_START):
        return text
    end = text.find("]\n\n")
    if end < 0 or "\n" in text[: end + 1]:
        return text
    return text[end + 3 :]
