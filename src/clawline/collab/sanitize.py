"""Making transcript messages safe and small for session tools (docs/collaboration.md).

What another session's history looks like to a model (``sessions_history``, the ``messages`` of
``sessions_list``, the replies ``sessions_send`` reads):

- text loses thinking tags (``<think>…</think>``, ``<thinking>``, ``<thought>``,
  ``<antThinking>``), ``<relevant-memories>`` blocks, tool-call XML (``<tool_call>``,
  ``<function_calls>``, ``<minimax:tool_call>``, …), ``[Tool Call: …]`` / ``[Tool Result …]``
  scaffolding lines and ``<|…|>`` special tokens;
- secrets are redacted (API keys, tokens, bearer credentials, private keys, ``password=…``);
- each text is cut at :data:`TEXT_MAX_CHARS` characters (``…(truncated)…`` marks the cut);
- thinking blocks are dropped, inline image/file data is left out (``omitted: true, bytes``),
  and ``details``/``usage``/``cost`` metadata is removed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from clawline.agents.scaffolding import strip_scaffolding
from clawline.types import JSON, JSONObject

TEXT_MAX_CHARS = 4000
TRUNCATION_MARK = "\n…(truncated)…"
REDACTED = "[REDACTED]"

_SECRETS = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL),
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
)
_BEARER = re.compile(r"\b(Bearer\s+)[A-Za-z0-9._~+/-]{16,}=*", re.IGNORECASE)
_ASSIGNED = re.compile(
    r"\b((?:api[_-]?key|secret|token|password|passwd|access[_-]?key)\w*[\"']?\s*[:=]\s*[\"']?)"
    r"([^\s\"',;]{8,})",
    re.IGNORECASE,
)


def redact_secrets(text: str) -> str:
    out = text
    for pattern in _SECRETS:
        out = pattern.sub(REDACTED, out)
    out = _BEARER.sub(lambda match: match.group(1) + REDACTED, out)
    return _ASSIGNED.sub(lambda match: match.group(1) + REDACTED, out)


@dataclass(frozen=True, slots=True)
class Sanitized:
    message: JSONObject
    truncated: bool
    redacted: bool


class _Flags:
    __slots__ = ("redacted", "truncated")

    def __init__(self) -> None:
        self.truncated = False
        self.redacted = False

    def text(self, text: str) -> str:
        stripped = strip_scaffolding(text)
        cleaned = redact_secrets(stripped)
        if cleaned != stripped:
            self.redacted = True
        if len(cleaned) > TEXT_MAX_CHARS:
            self.truncated = True
            return cleaned[:TEXT_MAX_CHARS] + TRUNCATION_MARK
        return cleaned


def _block(block: JSON, flags: _Flags) -> JSON | None:
    if not isinstance(block, Mapping):
        return block
    kind = block.get("type")
    if kind in ("thinking", "redacted_thinking"):
        flags.truncated = True
        return None
    out: JSONObject = dict(block)
    text = out.get("text")
    if isinstance(text, str):
        out["text"] = flags.text(text)
    data = out.get("data")
    if kind in ("image", "file") and isinstance(data, str):
        del out["data"]
        out["omitted"] = True
        out["bytes"] = len(data.rstrip("=")) * 3 // 4
        flags.truncated = True
    return out


def _tool_calls(raw: JSON, flags: _Flags) -> JSON:
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        return raw
    calls: list[JSON] = []
    for call in raw:
        if isinstance(call, Mapping):
            arguments = call.get("arguments")
            copy: JSONObject = dict(call)
            if isinstance(arguments, Mapping):
                copy["arguments"] = {
                    name: flags.text(value) if isinstance(value, str) else value
                    for name, value in arguments.items()
                }
            calls.append(copy)
        else:
            calls.append(call)
    return calls


def sanitize_message(message: Mapping[str, JSON]) -> Sanitized:
    """A stripped, redacted and clipped copy of a transcript message (module docstring)."""
    flags = _Flags()
    out: JSONObject = {
        name: value for name, value in message.items() if name not in ("details", "usage", "cost")
    }
    if "details" in message:
        flags.truncated = True
    content = out.get("content")
    if isinstance(content, str):
        out["content"] = flags.text(content)
    elif isinstance(content, Sequence):
        blocks = [_block(block, flags) for block in content]
        out["content"] = [block for block in blocks if block is not None]
    if "toolCalls" in out:
        out["toolCalls"] = _tool_calls(out["toolCalls"], flags)
    return Sanitized(out, flags.truncated, flags.redacted)
