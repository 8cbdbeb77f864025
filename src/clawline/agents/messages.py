"""Transcript messages of runs: what a user message, an assistant reply and an attachment look
like when stored (``type: "message"`` events), and how they are checked.

A stored message is ``{role, content:[blocks…], …}`` where a block is ``{type:"text", text}``,
``{type:"image", mimeType, data, fileName?}`` or ``{type:"file", mimeType?, data, fileName?}``
(``data`` is base64). Clients see it through
:func:`clawline.records.transcript.message_json`, which adds ``id``, ``seq`` and ``timestamp``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from clawline.errors import InvalidField
from clawline.types import JSON, JSONObject

MESSAGE_EVENT = "message"
"""The transcript event type of chat messages."""

MAX_ATTACHMENT_BYTES = 5_000_000
"""Total decoded size of one send's attachments (OpenClaw's chat attachment limit)."""
MAX_IDEMPOTENCY_KEY = 512

_ATTACHMENT_FIELDS = frozenset({"type", "mimeType", "fileName", "content"})
_DATA_URL = re.compile(r"data:([^;,]*)(?:;[^,]*)?;base64,", re.IGNORECASE)
_BASE64 = re.compile(r"[A-Za-z0-9+/_\-\r\n]*={0,2}")


def check_message(message: object, *, has_attachments: bool = False) -> str:
    if not isinstance(message, str):
        raise InvalidField("invalid message: must be a string")
    if "\x00" in message:
        raise InvalidField("invalid message: NUL characters are not allowed")
    if not message.strip() and not has_attachments:
        raise InvalidField("invalid message: empty (send text or attachments)")
    return message


def check_idempotency_key(key: object) -> str:
    if not isinstance(key, str) or not key.strip():
        raise InvalidField("invalid idempotencyKey: must be a non-empty string")
    if len(key) > MAX_IDEMPOTENCY_KEY or "\x00" in key:
        raise InvalidField(
            f"invalid idempotencyKey: at most {MAX_IDEMPOTENCY_KEY} characters, no NUL"
        )
    return key


def _decoded_size(data: str) -> int:
    stripped = data.rstrip()
    padding = len(stripped) - len(stripped.rstrip("="))
    return max(0, len(stripped.replace("\n", "").replace("\r", "")) * 3 // 4 - padding)


def _attachment_block(index: int, raw: object) -> tuple[JSONObject, int]:
    where = f"attachments[{index}]"
    if not isinstance(raw, Mapping):
        raise InvalidField(f"invalid {where}: must be an object")
    unknown = sorted(set(raw) - _ATTACHMENT_FIELDS)
    if unknown:
        raise InvalidField(f"invalid {where}: unknown key {unknown[0]!r}")
    for name in ("type", "mimeType", "fileName"):
        if raw.get(name) is not None and not isinstance(raw.get(name), str):
            raise InvalidField(f"invalid {where}.{name}: must be a string")
    content = raw.get("content")
    if not isinstance(content, str) or not content:
        raise InvalidField(f"invalid {where}.content: must be a non-empty base64 string")
    mime = raw.get("mimeType")
    match = _DATA_URL.match(content)
    if match:
        content = content[match.end() :]
        mime = mime or match.group(1) or None
    if not _BASE64.fullmatch(content):
        raise InvalidField(f"invalid {where}.content: not base64")
    kind = raw.get("type")
    is_image = kind == "image" or (
        kind is None and isinstance(mime, str) and mime.startswith("image/")
    )
    block: JSONObject = {"type": "image" if is_image else "file", "data": content}
    if mime:
        block["mimeType"] = mime
    if raw.get("fileName"):
        block["fileName"] = raw["fileName"]
    return block, _decoded_size(content)


def attachment_blocks(attachments: object) -> list[JSONObject]:
    """Check ``[{type?, mimeType?, fileName?, content}]`` (base64 or a data URL) and turn
    them into content blocks; at most :data:`MAX_ATTACHMENT_BYTES` decoded bytes in all."""
    if attachments is None:
        return []
    if isinstance(attachments, str | bytes) or not isinstance(attachments, Sequence):
        raise InvalidField("invalid attachments: must be an array")
    blocks: list[JSONObject] = []
    total = 0
    for index, raw in enumerate(attachments):
        block, size = _attachment_block(index, raw)
        blocks.append(block)
        total += size
    if total > MAX_ATTACHMENT_BYTES:
        raise InvalidField(
            f"attachments too large: {total} bytes (max {MAX_ATTACHMENT_BYTES} bytes in all)"
        )
    return blocks


def user_message(text: str, attachments: Sequence[JSONObject] = ()) -> JSONObject:
    content: list[JSON] = [{"type": "text", "text": text}] if text else []
    content.extend(attachments)
    return {"role": "user", "content": content}


def assistant_message(
    text: str,
    *,
    stop_reason: str,
    usage: Mapping[str, JSON] | None = None,
    extra: Mapping[str, JSON] | None = None,
) -> JSONObject:
    message: JSONObject = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stopReason": stop_reason,
    }
    if usage is not None:
        message["usage"] = dict(usage)
    if extra:
        message.update(extra)
    return message


def text_of(message: Mapping[str, JSON]) -> str:
    """The text blocks of a message, joined by newlines."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, Sequence):
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text":
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
    return "\n".join(parts)
