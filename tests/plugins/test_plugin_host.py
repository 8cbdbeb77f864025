"""The plugin facade: what :class:`PluginHost` offers over a real runtime (SQLite), the hooks that
receive it, and the registries and the method call described as Protocols (the plugin API names
no part above it: the import contracts of pyproject.toml)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from clawline.agents.providers.registry import ProviderRegistry
from clawline.agents.tools.registry import ToolRegistry
from clawline.channels.registry import ChannelRegistry
from clawline.config import Settings
from clawline.errors import InvalidSessionKey
from clawline.gateway.frames import ErrorCode
from clawline.gateway.registry import Call, MethodRegistry
from clawline.plugins import (
    ChannelRegistrar,
    MethodCall,
    MethodError,
    MethodRegistrar,
    PluginHost,
    PluginManager,
    ProviderRegistrar,
    ToolRegistrar,
    hookimpl,
)
from clawline.plugins.methods import METHOD_ERROR_CODES
from clawline.runtime import Runtime
from clawline.testing.clock import FakeClock
from clawline.types import JSON
from clawline.xworkmate.constants import PLUGIN_ID as XWORKMATE
from clawline.xworkmate.plugin import XWorkmatePlugin

if TYPE_CHECKING:
    from clawline.gateway.app import Gateway
    from clawline.gateway.connection import Connection


class Lifecycle:
    """Records the hosts ``startup`` and ``shutdown`` were given."""

    def __init__(self) -> None:
        self.hosts: list[tuple[str, PluginHost]] = []

    @hookimpl
    def startup(self, host: PluginHost) -> None:
        self.hosts.append(("startup", host))

    @hookimpl
    async def shutdown(self, host: PluginHost) -> None:
        self.hosts.append(("shutdown", host))


def test_the_registries_satisfy_the_plugin_api() -> None:
    methods: MethodRegistrar = MethodRegistry()  # mypy checks the structure
    tools: ToolRegistrar = ToolRegistry()
    channels: ChannelRegistrar = ChannelRegistry()
    providers: ProviderRegistrar = ProviderRegistry()
    assert isinstance(methods, MethodRegistrar)
    assert isinstance(tools, ToolRegistrar)
    assert isinstance(channels, ChannelRegistrar)
    assert isinstance(providers, ProviderRegistrar)
    for protocol in (MethodRegistrar, ToolRegistrar, ChannelRegistrar, ProviderRegistrar):
        assert not isinstance(object(), protocol)
    assert not isinstance(ToolRegistry(), ChannelRegistrar)  # no ids, no spawning hooks


def test_the_gateways_call_is_a_method_call() -> None:
    call: MethodCall = Call(  # mypy checks the structure
        request_id="r1",
        method="mine.count",
        params={"n": 1},
        connection=cast("Connection", None),
        gateway=cast("Gateway", None),
    )
    assert isinstance(call, MethodCall)
    assert (call.request_id, call.method, call.params) == ("r1", "mine.count", {"n": 1})
    assert not isinstance(object(), MethodCall)


def test_a_method_error_carries_a_protocol_code() -> None:
    assert {code.value for code in ErrorCode} >= METHOD_ERROR_CODES
    assert {"INVALID_REQUEST", "UNAVAILABLE", "CONFLICT"} == METHOD_ERROR_CODES
    refusal = MethodError("taken", "CONFLICT", details={"errorType": "Conflict"})
    assert (refusal.message, refusal.code, refusal.details) == (
        "taken",
        "CONFLICT",
        {"errorType": "Conflict"},
    )
    assert (MethodError("no").code, MethodError("no").details) == ("INVALID_REQUEST", None)
    with pytest.raises(ValueError, match="unknown method error code"):
        MethodError("no", "NOT_PAIRED")  # type: ignore[arg-type]


def test_the_host_offers_what_a_plugin_may_use(tmp_path: Path) -> None:
    clock = FakeClock(1_780_000_000_000)
    raw: dict[str, Any] = {
        "agents": {"list": [{"id": "writer", "workspace": str(tmp_path / "desk")}]},
        "tools": {"fs": {"allowHardlinks": True}},
        "mine": {"greeting": "hi"},
    }
    runtime = Runtime.open(Settings(state_dir=tmp_path / "state", raw=raw), clock=clock)
    try:
        host = runtime.plugin_host
        assert runtime.plugins.host is host
        assert host.canonical("main") == "agent:main:main"
        with pytest.raises(InvalidSessionKey):
            host.canonical("agent:")
        assert host.session("main") is None

        def mapping(current: JSON | None) -> JSON:
            return {"appThreadKey": "thread-1", "before": current}

        value = host.update_extension("main", "mine", "map", mapping, create=True)
        assert value == {"appThreadKey": "thread-1", "before": None}
        entry = host.session("main")
        assert entry is not None
        assert entry.plugin_extensions == {"mine": {"map": value}}
        assert host.read_extension("agent:main:main", "mine", "map") == value
        assert host.find_sessions("mine", "map", "appThreadKey", "thread-1") == ["agent:main:main"]

        task = host.tasks.create(
            runtime="cli",
            task="a plugin's task",
            requester_session_key="agent:main:main",
            owner_key="agent:main:main",
            run_id="turn-1",
        )
        assert [t.task_id for t in host.tasks.for_run("turn-1")] == [task.task_id]

        assert host.workspace("writer") == tmp_path / "desk"
        assert host.workspace("main") == runtime.runs.config.resolve_agent("main").workspace
        assert host.default_agent_id == "main"
        assert host.allow_hardlinks is True
        assert host.clock is clock
        assert host.state_dir == tmp_path / "state"
        assert host.config["mine"] == {"greeting": "hi"}
        with pytest.raises(TypeError):
            host.config["mine"] = {}  # type: ignore[index]
    finally:
        runtime.close()


async def test_blocking_work_runs_on_the_store_workers(tmp_path: Path) -> None:
    runtime = Runtime.open(Settings(state_dir=tmp_path / "state"))
    try:
        host = runtime.plugin_host
        await host.run(host.update_extension, "main", "mine", "n", lambda _: 1, create=True)
        assert await host.run(host.read_extension, "main", "mine", "n") == 1
        worker = await host.run(lambda: threading.current_thread().name)
        assert worker.startswith("clawline-store")
    finally:
        runtime.close()


async def test_startup_and_shutdown_receive_the_host(tmp_path: Path) -> None:
    runtime = Runtime.open(Settings(state_dir=tmp_path / "state"))
    try:
        probe = Lifecycle()
        assert runtime.plugins.add(probe, "probe")
        async with runtime:
            assert probe.hosts == [("startup", runtime.plugin_host)]
        assert probe.hosts == [("startup", runtime.plugin_host), ("shutdown", runtime.plugin_host)]
    finally:
        runtime.close()


async def test_a_manager_without_a_host_refuses_lifecycle_calls() -> None:
    manager = PluginManager()
    with pytest.raises(RuntimeError, match="not bound to a plugin host"):
        manager.context(session_key="agent:main:main")
    with pytest.raises(RuntimeError, match="not bound to a plugin host"):
        await manager.startup()


async def test_a_plugin_factory_gives_every_gateway_its_own_plugin(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="clawline.plugins")
    raw = {"plugins": {"enabled": ["clawline.xworkmate"], "entry_points": False}}
    first = Runtime.open(Settings(state_dir=tmp_path / "one", raw=raw))
    second = Runtime.open(Settings(state_dir=tmp_path / "two", raw=raw))
    try:
        async with first, second:
            mine, theirs = first.plugins.get(XWORKMATE), second.plugins.get(XWORKMATE)
            assert isinstance(mine, XWorkmatePlugin)
            assert isinstance(theirs, XWorkmatePlugin)
            assert mine is not theirs
            assert mine.state().host is first.plugin_host
            assert theirs.state().host is second.plugin_host
    finally:
        first.close()
        second.close()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
