"""A plugin module that adds one of everything: gateway methods (one answers, one refuses with a
protocol code), a tool, a channel and a model provider (loaded by the tests as
``tests.plugins.feature_plugin``). Its hooks are typed with the plugin API's Protocols.

The provider ``feature`` calls the tool ``feature_shout`` on the user's message, then answers
with what the tool returned, so one run exercises both.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence

from clawline.agents.providers.base import (
    Finish,
    ModelMessage,
    StreamItem,
    TextDelta,
    ToolCall,
    ToolCallDone,
)
from clawline.agents.tools.base import ToolContext, ToolResult, ToolSpec
from clawline.gateway.params import P
from clawline.gateway.registry import Call
from clawline.plugins import (
    READ,
    ChannelRegistrar,
    MethodCall,
    MethodError,
    MethodRegistrar,
    ProviderRegistrar,
    ToolRegistrar,
    hookimpl,
)
from clawline.testing.channels import FakeChannel, threads_channel
from clawline.types import JSON

PLUGIN_ID = "feature"

CHANNEL: FakeChannel = threads_channel("featurechat")
"""The channel adapter this plugin registers (tests read what it was told)."""


async def feature_echo(call: Call) -> JSON:
    return {"echo": call.params["text"], "sessions": call.gateway.store.backend}


REFUSAL = "feature is busy"


async def feature_refuse(call: MethodCall) -> JSON:
    raise MethodError(REFUSAL, "CONFLICT", details={"method": call.method})


class ShoutTool:
    spec = ToolSpec(
        name="feature_shout",
        description="Shout a text.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    )

    async def invoke(self, ctx: ToolContext, args: Mapping[str, JSON]) -> ToolResult:
        text = args.get("text")
        return ToolResult({"shout": str(text).upper(), "session": ctx.session_key})


class FeatureProvider:
    async def stream(
        self,
        *,
        model: str,
        system: str,
        messages: Sequence[ModelMessage],
        tools: Sequence[ToolSpec],
    ) -> AsyncIterator[StreamItem]:
        last = messages[-1]
        if last.role == "tool":
            shout = json.loads(last.content)["shout"]
            yield TextDelta(f"{model} says ")
            yield TextDelta(shout)
            yield Finish("stop")
            return
        assert "feature_shout" in [tool.name for tool in tools]
        yield ToolCallDone(
            ToolCall(id="call-1", name="feature_shout", arguments={"text": last.content})
        )
        yield Finish("toolUse")


@hookimpl
def register_gateway_methods(methods: MethodRegistrar) -> None:
    methods.add(
        "feature.echo",
        feature_echo,
        scope=READ,
        schema={"text": P.string(required=True, max_len=100)},
    )
    methods.add("feature.refuse", feature_refuse, scope=READ)


@hookimpl
def register_tools(tools: ToolRegistrar) -> None:
    tools.register(ShoutTool())


@hookimpl
def register_channels(channels: ChannelRegistrar) -> None:
    channels.register(CHANNEL)


@hookimpl
def register_providers(providers: ProviderRegistrar) -> None:
    providers.register("feature", FeatureProvider())
