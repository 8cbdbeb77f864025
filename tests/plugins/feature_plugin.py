"""A plugin module that adds one of everything: a gateway method, a tool, a channel and a model
provider (loaded by the tests as ``tests.plugins.feature_plugin``).

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
from clawline.agents.providers.registry import ProviderRegistry
from clawline.agents.tools.base import ToolContext, ToolResult, ToolSpec
from clawline.agents.tools.registry import ToolRegistry
from clawline.channels.registry import ChannelRegistry
from clawline.gateway.handshake import READ
from clawline.gateway.params import P
from clawline.gateway.registry import Call, MethodRegistry
from clawline.plugins import hookimpl
from clawline.testing.channels import FakeChannel, threads_channel
from clawline.types import JSON

PLUGIN_ID = "feature"

CHANNEL: FakeChannel = threads_channel("featurechat")
"""The channel adapter this plugin registers (tests read what it was told)."""


async def feature_echo(call: Call) -> JSON:
    return {"echo": call.params["text"], "sessions": call.gateway.store.backend}


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
def register_gateway_methods(methods: MethodRegistry) -> None:
    methods.add(
        "feature.echo",
        feature_echo,
        scope=READ,
        schema={"text": P.string(required=True, max_len=100)},
    )


@hookimpl
def register_tools(tools: ToolRegistry) -> None:
    tools.register(ShoutTool())


@hookimpl
def register_channels(channels: ChannelRegistry) -> None:
    channels.register(CHANNEL)


@hookimpl
def register_providers(providers: ProviderRegistry) -> None:
    providers.register("feature", FeatureProvider())
