"""Recorded runs and the session mapping on a real store, without a gateway."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clawline.config import Settings
from clawline.errors import SessionNotFound
from clawline.plugins.host import PluginHost
from clawline.runtime import Runtime
from clawline.testing.clock import FakeClock
from clawline.xworkmate.constants import MAPPING_NAMESPACE, PLUGIN_ID, TASK_RUNS_NAMESPACE
from clawline.xworkmate.mapping import (
    find_mapping,
    iso_now,
    read_mapping,
    upsert_mapping,
)
from clawline.xworkmate.open_params import XWorkmateConflict
from clawline.xworkmate.task_runs import (
    MAX_RECORDED_RUNS,
    latest_run,
    read_run,
    record_run_ended,
    record_run_started,
    redact,
)

KEY = "agent:main:thread-main"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1_780_000_000_000)


@pytest.fixture
def services(tmp_path: Path, clock: FakeClock) -> Iterator[Runtime]:
    opened = Runtime.open(Settings(state_dir=tmp_path), clock=clock)
    yield opened
    opened.close()


@pytest.fixture
def host(services: Runtime) -> PluginHost:
    return services.plugin_host


def test_iso_time_as_javascript_writes_it(clock: FakeClock) -> None:
    clock.set(1_780_636_411_666)
    assert iso_now(clock) == "2026-06-05T05:13:31.666Z"


def test_a_run_from_prepare_to_its_end(host: PluginHost, clock: FakeClock) -> None:
    record_run_started(KEY, "turn-1", host=host)
    started = read_run(KEY, "turn-1", host=host)
    assert started == {
        "schemaVersion": 1,
        "runId": "turn-1",
        "status": "running",
        "success": False,
        "startedAt": "2026-05-28T20:26:40.000Z",
        "updatedAt": "2026-05-28T20:26:40.000Z",
    }
    clock.advance(1500)
    record_run_ended(KEY, "turn-1", host=host, success=True, output="done", error=None)
    assert read_run(KEY, "turn-1", host=host) == {
        "schemaVersion": 1,
        "runId": "turn-1",
        "status": "completed",
        "success": True,
        "startedAt": "2026-05-28T20:26:40.000Z",
        "updatedAt": "2026-05-28T20:26:41.500Z",
        "completedAt": "2026-05-28T20:26:41.500Z",
        "output": "done",
    }
    stored = host.read_extension(KEY, PLUGIN_ID, TASK_RUNS_NAMESPACE)
    assert isinstance(stored, dict)
    assert stored["schemaVersion"] == 1
    assert list(stored["runs"]) == ["turn-1"]


def test_a_failed_run_keeps_a_redacted_truncated_error(host: PluginHost) -> None:
    record_run_started(KEY, "turn-1", host=host)
    error = "provider said: key sk-proj-abcdef1234567890 rejected; " + "e" * 3000
    output = "o" * (16 * 1024 + 10)
    record_run_ended(KEY, "turn-1", host=host, success=False, output=output, error=error)
    run = read_run(KEY, "turn-1", host=host)
    assert run is not None
    assert run["status"] == "failed"
    assert run["success"] is False
    assert run["output"] == "o" * 16 * 1024
    assert len(run["error"]) == 2048
    assert run["error"].startswith("provider said: key sk-[REDACTED] rejected; eee")
    assert "abcdef" not in run["error"]


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("token sk-abc123DEF456 end", "token sk-[REDACTED] end"),
        ("sk-ant-api03-xyz_-9", "sk-[REDACTED]"),
        ("nvapi-QwErTy123 and more", "nvapi-[REDACTED] and more"),
        ("api_key: hunter2 next", "api_key: [REDACTED] next"),
        ('{"apiKey": "s3cr3t", "x": 1}', '{"apiKey": "[REDACTED]", "x": 1}'),
        ("API-KEY=abc;rest", "API-KEY=[REDACTED];rest"),
        ("task-1 asked for risk-free", "task-1 asked for risk-free"),
        ("no secrets here", "no secrets here"),
    ],
)
def test_redaction(text: str, redacted: str) -> None:
    assert redact(text) == redacted


def test_at_most_32_runs_are_kept_the_latest_updated(host: PluginHost, clock: FakeClock) -> None:
    for n in range(40):
        clock.advance(1000)
        record_run_started(KEY, f"run-{n}", host=host)
    clock.advance(1000)
    record_run_ended(KEY, "run-8", host=host, success=True, output="late", error=None)
    stored = host.read_extension(KEY, PLUGIN_ID, TASK_RUNS_NAMESPACE)
    assert isinstance(stored, dict)
    kept = set(stored["runs"])
    assert len(kept) == MAX_RECORDED_RUNS
    assert kept == {f"run-{n}" for n in range(9, 40)} | {"run-8"}
    latest = latest_run(KEY, host=host)
    assert latest is not None
    assert latest["runId"] == "run-8"


def test_an_end_without_a_session_writes_nothing(host: PluginHost, services: Runtime) -> None:
    with pytest.raises(SessionNotFound, match="session not found"):
        record_run_ended(KEY, "turn-1", host=host, success=True, output="x", error=None)
    assert services.catalog.get(KEY) is None


def test_the_mapping_fails_closed(host: PluginHost, services: Runtime, clock: FakeClock) -> None:
    first = upsert_mapping(
        host=host,
        app_thread_key="thread-main",
        openclaw_session_key=KEY,
        expected_artifact_dirs=["reports/"],
        source="bridge_prepare",
        created_at="2026-06-01T00:00:00.000Z",
    )
    assert first.created_at == "2026-06-01T00:00:00.000Z"
    assert services.catalog.get(KEY) is not None  # created with the mapping
    clock.advance(5000)
    again = upsert_mapping(
        host=host,
        app_thread_key="thread-main",
        openclaw_session_key=KEY,
        expected_artifact_dirs=["dist/"],
        source="session_start",
    )
    assert again.created_at == first.created_at
    assert again.source == "bridge_prepare"
    assert again.expected_artifact_dirs == ["dist/"]
    assert again.updated_at > first.updated_at
    for app_key, session_key in (("thread-other", KEY), ("thread-main", "agent:main:Thread-Main")):
        with pytest.raises(XWorkmateConflict) as caught:
            upsert_mapping(
                host=host,
                app_thread_key=app_key,
                openclaw_session_key=session_key,
                expected_artifact_dirs=[],
                source="bridge_prepare",
            )
        assert str(caught.value) == (
            "conflict: xworkmate session mapping already points to a different session"
        )
    assert read_mapping(KEY, host=host) == again
    assert host.read_extension(KEY, PLUGIN_ID, MAPPING_NAMESPACE) == again.to_json()


def test_lookup_by_app_thread_is_indexed(host: PluginHost, clock: FakeClock) -> None:
    for key, app_key in ((KEY, "thread-main"), ("agent:main:other", "thread-other")):
        upsert_mapping(
            host=host,
            app_thread_key=app_key,
            openclaw_session_key=key,
            expected_artifact_dirs=[],
            source="bridge_prepare",
        )
    clock.advance(10)
    upsert_mapping(
        host=host,
        app_thread_key="thread-main",
        openclaw_session_key="agent:main:newer",
        expected_artifact_dirs=[],
        source="bridge_prepare",
    )
    found = find_mapping("thread-main", host=host)
    assert found is not None
    assert found.openclaw_session_key == "agent:main:newer"
    assert find_mapping("nobody", host=host) is None
    other = find_mapping("thread-other", host=host)
    assert other is not None
    assert other.openclaw_session_key == "agent:main:other"
