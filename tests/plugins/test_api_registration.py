"""Registration: a plugin adds a gateway method, a tool, a channel and a provider, each used
for real through a gateway; built-ins keep their names; config and entry-point loading."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from clawline.config import ConfigError, Settings
from clawline.gateway.assembly import gateway_methods
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
from clawline.plugins import PluginManager, hookimpl
from clawline.records.collab import ThreadBinding
from clawline.runtime import Runtime
from clawline.types import JSON
from tests.plugins import feature_plugin
from tests.plugins.plugin_support import (
    SAMPLES,
    connected,
    plugin_gateway,
    plugin_settings,
    run_to_end,
)

FEATURE = "tests.plugins.feature_plugin"
AGENTS = {
    "agents": {"list": [{"id": "feat", "model": "feature/loud"}]},
}


async def test_a_plugin_adds_a_method_a_tool_a_channel_and_a_provider(tmp_path: Path) -> None:
    settings = plugin_settings(tmp_path / "state", FEATURE, raw=AGENTS)
    async with plugin_gateway(settings) as gw, connected(gw) as client:
        services = gw.runtime
        [info] = [p for p in services.plugins.plugins() if p.name == "feature"]
        assert (info.source, info.origin) == ("config", FEATURE)
        assert info.hooks == (
            "register_channels",
            "register_gateway_methods",
            "register_providers",
            "register_tools",
        )
        hello = client.challenge  # the method is announced like a built-in one
        assert hello["event"] == "connect.challenge"
        assert "feature.echo" in gw.gateway.features()["methods"]  # type: ignore[operator]
        echoed = await client.ok("feature.echo", {"text": "ping"})
        assert echoed == {"echo": "ping", "sessions": "sqlite"}
        refused = await client.call("feature.echo", {"text": 5})
        assert refused["ok"] is False
        # A MethodError is answered with its protocol code and details, as the plugin raised it.
        refused = await client.call("feature.refuse", {})
        assert (refused["ok"], refused["error"]) == (
            False,
            {
                "code": "CONFLICT",
                "message": feature_plugin.REFUSAL,
                "details": {
                    "method": "feature.refuse",
                    "errorType": "Conflict",
                    "errorClass": "MethodError",
                },
            },
        )

        # The agent "feat" runs on the plugin's provider, which calls the plugin's tool.
        done = await run_to_end(client, "agent:feat:main", "make noise", "feat-1")
        assert done["status"] == "ok"
        history = await client.ok("chat.history", {"sessionKey": "agent:feat:main"})
        messages = history["messages"]
        assert messages[-1]["role"] == "assistant"
        assert messages[-1]["content"] == [{"type": "text", "text": "loud says MAKE NOISE"}]
        calls = [call for m in messages for call in m.get("toolCalls", [])]
        assert [(c["name"], c["arguments"]) for c in calls] == [
            ("feature_shout", {"text": "make noise"})
        ]
        tool_results = [m for m in messages if m["role"] in ("tool", "toolResult")]
        assert "MAKE NOISE" in tool_results[0]["content"][0]["text"]

        # The channel is the registry's adapter: unbinding a session bound on it tells it.
        channel = feature_plugin.CHANNEL
        channel.ended.clear()
        assert services.channels.get("featurechat") is channel
        child = "agent:main:subagent:00000000-0000-4000-8000-00000000feed"
        await client.ok("sessions.create", {"key": child})
        now = services.clock.now_ms()
        binding = ThreadBinding(
            channel="featurechat",
            account_id="acct",
            conversation_id="room",
            session_key=child,
            placement="child",
            bound_at=now,
            last_activity_at=now,
        )

        def bind() -> None:
            with services.store.transaction() as tx:
                tx.bindings.bind(binding)

        await services.call(bind)
        await client.ok("sessions.delete", {"key": child})
        [ended] = channel.ended
        assert (ended.target_session_key, ended.reason) == (child, "session-delete")


def test_the_model_config_refuses_a_provider_no_plugin_registers(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match='unknown provider "feature"'):
        Runtime.open(plugin_settings(tmp_path / "state", raw=AGENTS))
    services = Runtime.open(plugin_settings(tmp_path / "state", FEATURE, raw=AGENTS))
    try:
        provider, model = services.runs.providers.resolve("feature/loud")
        assert (type(provider).__name__, model) == ("FeatureProvider", "loud")
    finally:
        services.close()


class TakesBuiltinNames:
    PLUGIN_ID = "greedy"

    async def health(self, call: Call) -> JSON:
        return {"mine": True}

    @hookimpl
    def register_gateway_methods(self, methods: MethodRegistry) -> None:
        methods.add("greedy.ping", self.health, scope=READ)
        methods.add("health", self.health, scope=None)


def test_builtins_keep_their_names(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    runtime = Runtime.open(Settings(state_dir=tmp_path / "state"))
    try:
        assert runtime.plugins.add(TakesBuiltinNames(), "greedy")
        methods = gateway_methods(runtime)  # the table a gateway over this runtime serves
    finally:
        runtime.close()
    assert methods.get("health").handler.__module__ == "clawline.gateway.methods.system"
    assert methods.get("greedy.ping").scope == READ
    assert any(
        "plugin greedy: register_gateway_methods failed" in r.getMessage() for r in caplog.records
    )


class Misnamed:
    @hookimpl
    def session_started(self, event: dict[str, Any]) -> None: ...


class WrongArguments:
    @hookimpl
    def agent_end(self, event: dict[str, Any], context: object) -> None: ...


def test_invalid_plugins_are_refused_and_recorded(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="clawline.plugins")
    manager = PluginManager()
    assert manager.add(Misnamed(), "misnamed") is False
    assert manager.add(WrongArguments(), "wrong") is False
    assert manager.add(Misnamed(), "clash") is False
    assert [(f.name, f.source) for f in manager.failures] == [
        ("misnamed", "api"),
        ("wrong", "api"),
        ("clash", "api"),
    ]
    assert "unknown hooks: session_started" in manager.failures[0].error
    assert "context" in manager.failures[1].error
    assert manager.plugins() == []
    assert manager.add(feature_plugin, "feature") is True
    assert manager.add(feature_plugin, "feature") is False
    assert "already" in manager.failures[-1].error


@pytest.mark.parametrize(
    ("plugins", "message"),
    [
        ([], "config: plugins must be a table"),
        ({"enabled": "x"}, "plugins.enabled must be a list of non-empty strings"),
        ({"disabled": [""]}, "plugins.disabled must be a list of non-empty strings"),
        ({"entry_points": "yes"}, "plugins.entry_points must be true or false"),
        ({"hook_timeout_seconds": 0}, "plugins.hook_timeout_seconds must be a number above 0"),
        ({"hook_timeout_seconds": True}, "plugins.hook_timeout_seconds must be a number"),
        ({"entries": {"x": {"config": 3}}}, "plugins.entries.x.config must be a table"),
    ],
)
def test_bad_plugin_config_is_refused(plugins: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        PluginManager.from_settings(Settings(state_dir=Path("/x"), raw={"plugins": plugins}))


def test_the_listed_builtins_are_the_ones_the_runtime_and_a_gateway_add(tmp_path: Path) -> None:
    runtime = Runtime.open(Settings(state_dir=tmp_path / "state"))
    try:
        gateway_methods(runtime)  # the gateway adds the plugin object of its built-in methods
        added = [p for p in runtime.plugins.plugins() if p.source == "builtin"]
    finally:
        runtime.close()
    assert added == PluginManager.builtin_plugins()
    assert [p.name for p in added] == [
        "clawline.gateway",
        "clawline.channels",
        "clawline.providers",
        "clawline.collab",
        "clawline.files",
    ]


def test_disabled_plugins_are_not_loaded_but_builtins_always_are(tmp_path: Path) -> None:
    builtins = [p.name for p in PluginManager.builtin_plugins()]
    raw = {
        "plugins": {
            "enabled": [f"{SAMPLES}:recorder", FEATURE],
            "disabled": ["recorder", *builtins],
            "entry_points": False,
        }
    }
    runtime = Runtime.open(Settings(state_dir=tmp_path / "state", raw=raw))
    try:
        gateway_methods(runtime)  # with a gateway, its built-in methods' plugin too
        loaded = [(p.name, p.source) for p in runtime.plugins.plugins()]
    finally:
        runtime.close()
    assert loaded == [*((name, "builtin") for name in builtins), ("feature", "config")]
