"""The scaffolding a model's text may carry and a reader should not see: thinking tags
(``<think>…</think>``, ``<thinking>``, ``<thought>``, ``<antThinking>``, ``<reasoning>``),
``<relevant-memories>`` blocks, tool-call XML (``<tool_call>``, ``<function_calls>``,
``<minimax:tool_call>``, …), ``[Tool Call: …]`` / ``[Tool Result …]`` lines and ``<|…|>``
special tokens. Another agent reads replies without it (:mod:`clawline.collab.sanitize`), and
so does a person on a channel (the reply queued in the outbox)."""

from __future__ import annotations

import re

_THINKING_TAGS = r"think|thinking|thought|antthinking|reasoning"
_THINKING_BLOCK = re.compile(
    rf"<\s*({_THINKING_TAGS})\b[^>]*>.*?<\s*/\s*\1\s*>", re.IGNORECASE | re.DOTALL
)
_THINKING_UNCLOSED = re.compile(rf"<\s*({_THINKING_TAGS})\b[^>]*>.*\Z", re.IGNORECASE | re.DOTALL)
_STRAY_THINKING_TAG = re.compile(rf"<\s*/?\s*(?:{_THINKING_TAGS})\b[^>]*>", re.IGNORECASE)
_MEMORIES = re.compile(
    r"<\s*relevant-memories\b[^>]*>.*?<\s*/\s*relevant-memories\s*>", re.IGNORECASE | re.DOTALL
)
_TOOL_XML = re.compile(
    r"<\s*(minimax:tool_call|tool_calls?|function_calls|function_call|invoke)\b[^>]*>"
    r".*?<\s*/\s*\1\s*>",
    re.IGNORECASE | re.DOTALL,
)
_TOOL_CALL_LINE = re.compile(
    r"^[ \t]*\[Tool Call:[^\]\n]*\][^\n]*(?:\n[ \t]*Arguments:[^\n]*)?", re.MULTILINE
)
_TOOL_RESULT_LINE = re.compile(r"^[ \t]*\[Tool Result[^\]\n]*\][^\n]*", re.MULTILINE)
_SPECIAL_TOKEN = re.compile(r"<\|[^|<>\n]{0,64}\|>")
_BLANK_RUNS = re.compile(r"\n{3,}")


def strip_scaffolding(text: str) -> str:
    """``text`` without thinking, memories, tool-call markup and special tokens (trimmed when
    something was taken out)."""
    if not text:
        return text
    out = text
    for pattern in (
        _THINKING_BLOCK,
        _THINKING_UNCLOSED,
        _STRAY_THINKING_TAG,
        _MEMORIES,
        _TOOL_XML,
        _TOOL_CALL_LINE,
        _TOOL_RESULT_LINE,
        _SPECIAL_TOKEN,
    ):
        out = pattern.sub("", out)
    if out == text:
        return text
    return _BLANK_RUNS.sub("\n\n", out).strip()


def visible_text(text: str) -> str:
    """An assistant reply as another agent or a person should read it: scaffolding stripped,
    trimmed."""
    return strip_scaffolding(text).strip()
