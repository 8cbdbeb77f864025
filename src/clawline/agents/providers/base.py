"""The model provider seam.

A :class:`Provider` turns a conversation into a stream of :class:`TextDelta` (assistant text as
it arrives), :class:`ToolCallDone` (one complete tool call, arguments parsed) and exactly one
final :class:`Finish` (why the model stopped, and token usage)::

    async for item in provider.stream(model="gpt-4o", system=prompt, messages=msgs, tools=specs):
        ...

Providers raise :class:`ProviderError` for everything that goes wrong talking to the model
(network, HTTP status, malformed stream); its message is what the failed run reports.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias

from clawline.agents.tools.base import ToolSpec
from clawline.errors import Unavailable
from clawline.types import JSON, JSONObject

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]


class ProviderError(Unavailable):
    """The model could not be reached or answered with an error."""

    def __init__(self, message: str, *, provider: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: Mapping[str, JSON] = field(default_factory=dict)
    error: str | None = None
    """Set when the model's arguments could not be parsed (the call is answered with an
    error result instead of running the tool)."""

    def to_json(self) -> JSONObject:
        return {"id": self.id, "name": self.name, "arguments": dict(self.arguments)}


@dataclass(frozen=True, slots=True)
class ModelMessage:
    role: Role
    content: str = ""
    tool_calls: Sequence[ToolCall] = ()
    """Assistant messages: the tools the model called."""
    tool_call_id: str | None = None
    """Tool messages: which call this is the result of."""
    name: str | None = None
    """Tool messages: the tool's name."""
    is_error: bool = False
    """Tool messages: the result is an error."""
    interrupted: bool = False
    """Tool messages: a stand-in the turn loop wrote because the call was cut off (an abort, a
    shutdown); the tool may or may not have taken effect."""
    seq: int | None = None
    """The message's transcript seq, when it was read from a transcript."""


@dataclass(frozen=True, slots=True)
class Usage:
    input: int = 0
    output: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input + other.input, self.output + other.output)

    def to_json(self) -> JSONObject:
        return {"input": self.input, "output": self.output, "totalTokens": self.input + self.output}


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDone:
    call: ToolCall


@dataclass(frozen=True, slots=True)
class Finish:
    stop_reason: str = "stop"
    """``stop`` | ``toolUse`` | ``length`` (normalised across providers)."""
    usage: Usage = field(default_factory=Usage)


StreamItem: TypeAlias = TextDelta | ToolCallDone | Finish


class Provider(Protocol):
    def stream(
        self,
        *,
        model: str,
        system: str,
        messages: Sequence[ModelMessage],
        tools: Sequence[ToolSpec],
    ) -> AsyncIterator[StreamItem]: ...
