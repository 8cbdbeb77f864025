"""A gateway is built from a runtime in one place (``clawline.gateway.assembly``): it gets the
runtime's parts, never the runtime; building it starts nothing; its built-in methods come from
the gateway plugin object the gateway adds to the runtime's plugins, through the same hook as any
plugin's."""

from __future__ import annotations

import asyncio
from pathlib import Path

from clawline.config import Settings
from clawline.gateway.assembly import build_gateway, gateway_methods
from clawline.gateway.methods import builtin_methods
from clawline.gateway.options import GatewaySettings
from clawline.gateway.plugin import PLUGIN_NAME, GatewayMethodsPlugin
from clawline.gateway.registry import Call, MethodRegistry
from clawline.pairing.scopes import READ
from clawline.plugins import hookimpl
from clawline.runtime import Runtime
from clawline.types import JSON


async def test_the_gateway_gets_the_runtime_parts_and_not_the_runtime(tmp_path: Path) -> None:
    runtime = Runtime.open(Settings(state_dir=tmp_path / "state"))
    try:
        before = asyncio.all_tasks()
        gateway = build_gateway(runtime, GatewaySettings(port=0))
        assert asyncio.all_tasks() == before, "building a gateway starts no task"
        assert gateway.catalog is runtime.catalog
        assert gateway.runs is runtime.runs
        assert gateway.tasks is runtime.tasks
        assert gateway.store is runtime.store
        assert gateway.workers is runtime.workers
        assert gateway.clock is runtime.clock
        assert gateway.events is runtime.events
        assert gateway.plugins is runtime.plugins
        assert gateway.thread_bindings is runtime.thread_bindings
        assert gateway.row_cache is runtime.row_cache
        assert gateway.instance is runtime.instance
        assert gateway.state_dir == runtime.settings.state_dir
        assert all(value is not runtime for value in vars(gateway).values())
        # Nothing started: the store's instance lock is still free for the runtime to take.
        await gateway.start_parts()
        await gateway.stop_parts()
    finally:
        runtime.close()


async def echo(call: Call) -> JSON:
    return {"echo": call.params.get("text")}


class AddsOneMethod:
    @hookimpl
    def register_gateway_methods(self, methods: MethodRegistry) -> None:
        methods.add("extra.echo", echo, scope=READ)


def test_the_built_in_methods_register_through_the_gateway_plugin(tmp_path: Path) -> None:
    runtime = Runtime.open(Settings(state_dir=tmp_path / "state"))
    try:
        assert runtime.plugins.get(PLUGIN_NAME) is None  # the runtime knows no gateway
        assert runtime.plugins.add(AddsOneMethod(), "adds-one")
        methods = gateway_methods(runtime)
        [info] = [p for p in runtime.plugins.plugins() if p.name == PLUGIN_NAME]
        assert (info.source, info.hooks) == ("builtin", ("register_gateway_methods",))
        builtin = builtin_methods().names()
        assert methods.names() == [*builtin, "extra.echo"]  # the built-ins first
        assert methods.get("health").handler is builtin_methods().get("health").handler
        assert build_gateway(runtime, GatewaySettings(port=0)).methods.names() == methods.names()
        assert [p.name for p in runtime.plugins.plugins()].count(PLUGIN_NAME) == 1
    finally:
        runtime.close()


def test_a_method_table_given_to_the_assembly_replaces_the_plugins_one(tmp_path: Path) -> None:
    runtime = Runtime.open(Settings(state_dir=tmp_path / "state"))
    try:
        own = MethodRegistry()
        own.add("only.this", echo, scope=None)
        assert build_gateway(runtime, GatewaySettings(port=0), methods=own).methods is own
    finally:
        runtime.close()


def test_the_gateway_plugin_adds_every_built_in_family() -> None:
    methods = MethodRegistry()
    GatewayMethodsPlugin().register_gateway_methods(methods)
    assert methods.names() == builtin_methods().names()
    assert {"health", "sessions.list", "chat.send", "agent", "tasks.list", "web.family"} <= set(
        methods.names()
    )
