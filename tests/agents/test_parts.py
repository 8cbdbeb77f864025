"""The run manager's parts on their own: cache, outcome, settings, echo, history clipping."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from clawline.agents.chat_history import clip_message, fit_budget, read_messages
from clawline.agents.echo import EchoRunner
from clawline.agents.idempotency import IDEMPOTENCY_TTL_MS, IdempotencyCache
from clawline.agents.messages import text_of
from clawline.agents.providers.offline import OfflineProvider
from clawline.agents.run import RunOutcome, terminal_status
from clawline.agents.stream import word_chunks
from clawline.agents.turn import AgentRunner
from clawline.config import (
    DEFAULT_RUN_TIMEOUT_MS,
    MAX_RUN_TIMEOUT_MS,
    AgentsSection,
    ConfigError,
    Settings,
    effective_timeout_ms,
)
from clawline.runtime import Runtime
from clawline.testing import FakeClock
from clawline.types import JSONObject, SessionStatus


def outcome(run_id: str, status: SessionStatus = "done", **kwargs: object) -> RunOutcome:
    fields: dict[str, object] = {
        "session_key": "agent:main:main",
        "accepted_at": 1,
        "started_at": 2,
        "ended_at": 5,
        **kwargs,
    }
    return RunOutcome(run_id=run_id, status=status, **fields)  # type: ignore[arg-type]


# --- idempotency cache -----------------------------------------------------------------------


def test_cache_entries_expire_after_the_ttl() -> None:
    clock = FakeClock()
    cache = IdempotencyCache(clock)
    cache.put("k", outcome("k"))
    clock.advance(IDEMPOTENCY_TTL_MS - 1)
    assert cache.get("k") == outcome("k")
    assert cache.by_run_id("k") == outcome("k")
    clock.advance(1)
    assert cache.get("k") is None
    assert cache.by_run_id("k") is None
    assert len(cache) == 0


def test_cache_keeps_the_newest_entries() -> None:
    cache = IdempotencyCache(FakeClock(), max_entries=2)
    for key in ("a", "b", "c"):
        cache.put(key, outcome(key))
    assert (cache.get("a"), len(cache)) == (None, 2)
    assert cache.by_run_id("a") is None
    assert cache.get("c") == outcome("c")


def test_cache_finds_runs_by_id_under_any_dedupe_key() -> None:
    cache = IdempotencyCache(FakeClock())
    cache.put("agent:x", outcome("x", "failed", error="boom"))
    found = cache.by_run_id("x")
    assert found is not None
    assert found.error == "boom"
    assert cache.get("x") is None


# --- outcome and status ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "stop_reason", "aborted", "status"),
    [
        (True, "aborted", True, "failed"),
        (False, "aborted", True, "killed"),
        (False, "aborted", False, "killed"),
        (False, "timeout", True, "timeout"),
        (False, "stop", False, "done"),
    ],
)
def test_terminal_status_follows_the_reference_order(
    error: bool, stop_reason: str, aborted: bool, status: str
) -> None:
    assert terminal_status(error=error, stop_reason=stop_reason, aborted=aborted) == status


def test_outcome_responses() -> None:
    done = outcome("r", text="hi").response()
    assert (done["status"], done["summary"]) == ("ok", "completed")
    assert done["result"]["text"] == "hi"  # type: ignore[index,call-overload]
    assert done["result"]["meta"]["durationMs"] == 3  # type: ignore[index,call-overload]
    failed = outcome("r", "failed", error="boom").response()
    assert (failed["status"], failed["summary"], "result" in failed) == ("error", "boom", False)
    assert outcome("r", "killed").response()["status"] == "aborted"
    assert outcome("r", "timeout", error="late").response()["summary"] == "late"
    assert outcome("r", "killed", started_at=None).wait_result() == {
        "runId": "r",
        "status": "error",
        "endedAt": 5,
        "error": "aborted",
    }


# --- settings and echo -----------------------------------------------------------------------


def test_agent_settings_from_config(tmp_path: Path) -> None:
    assert Settings(state_dir=tmp_path).config.agents == AgentsSection()
    raw = {"agents": {"echo_delay_ms": 0, "timeout_seconds": 2}}
    section = Settings(state_dir=tmp_path, raw=raw).config.agents
    assert (section.echo_delay_ms, section.run_timeout_ms) == (0, 2000)
    camel = Settings(state_dir=tmp_path, raw={"agents": {"echoDelayMs": 0, "timeoutSeconds": 2}})
    assert camel.config.agents == section
    none = {"agents": {"timeout_seconds": 0}}
    assert Settings(state_dir=tmp_path, raw=none).config.agents.run_timeout_ms == MAX_RUN_TIMEOUT_MS
    for bad in ({"agents": {"echo_delay_ms": -1}}, {"agents": {"timeout_seconds": "1"}}):
        with pytest.raises(ConfigError, match="must be an integer >= 0"):
            Settings(state_dir=tmp_path, raw=bad)
    with pytest.raises(ConfigError, match=r"^config: agents must be a table$"):
        Settings(state_dir=tmp_path, raw={"agents": 3})


def test_effective_timeout() -> None:
    assert effective_timeout_ms(None, DEFAULT_RUN_TIMEOUT_MS) == DEFAULT_RUN_TIMEOUT_MS
    assert effective_timeout_ms(0, 10) == MAX_RUN_TIMEOUT_MS
    assert effective_timeout_ms(MAX_RUN_TIMEOUT_MS * 2, 10) == MAX_RUN_TIMEOUT_MS
    assert effective_timeout_ms(25, 10) == 25


async def test_the_echo_delay_comes_from_the_config(tmp_path: Path) -> None:
    raw = {"agents": {"echo_delay_ms": 17}}
    services = Runtime.open(Settings(state_dir=tmp_path, raw=raw))
    try:
        runner = services.runs.runner
        assert isinstance(runner, AgentRunner)  # the offline model streams with the echo delay
        provider, model = runner.providers.resolve("offline")
        assert isinstance(provider, OfflineProvider)
        assert (provider.delay_ms, model) == (17, "offline")
    finally:
        services.close()


@pytest.mark.parametrize(
    ("text", "chunks"),
    [
        ("echo: hello  world", ["echo: ", "hello  ", "world"]),
        ("echo: ", ["echo: "]),
        ("echo: a\nb ", ["echo: ", "a\n", "b "]),
    ],
)
def test_word_chunks_join_to_the_text(text: str, chunks: list[str]) -> None:
    assert word_chunks(text) == chunks
    assert "".join(chunks) == text


def test_echo_delay_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="delay_ms"):
        EchoRunner(delay_ms=-1)


# --- history ---------------------------------------------------------------------------------


def test_clip_message_marks_what_it_cut() -> None:
    message: JSONObject = {
        "role": "user",
        "content": [
            {"type": "text", "text": "x" * 30},
            {"type": "text", "text": "short"},
            {"type": "image", "mimeType": "image/png", "data": "A" * 40},
        ],
    }
    clipped = clip_message(message, 10)
    blocks = clipped["content"]
    assert blocks == [
        {"type": "text", "text": "x" * 10 + "…[truncated: 20 more characters]", "truncated": True},
        {"type": "text", "text": "short"},
        {"type": "image", "mimeType": "image/png", "omitted": True, "bytes": 30},
    ]
    assert text_of(message).startswith("x" * 30 + "\n")  # the original is left alone
    plain = clip_message({"role": "user", "content": "y" * 12}, 10)
    assert plain["truncated"] is True
    assert str(plain["content"]).startswith("y" * 10 + "…")


def test_fit_budget_drops_the_oldest_messages() -> None:
    messages: list[JSONObject] = [
        {"seq": n, "content": [{"type": "text", "text": "z" * 100}]} for n in range(5)
    ]
    size = len(orjson.dumps(messages[0]))
    kept = fit_budget(messages, 3 * size + size // 2)
    assert [m["seq"] for m in kept] == [2, 3, 4]
    assert [m["seq"] for m in fit_budget(messages, 3 * size)] == [2, 3, 4]
    lone = fit_budget(messages, 50)
    assert [(m["seq"], m["omitted"]) for m in lone] == [(4, True)]
    assert fit_budget([], 10) == []


def test_read_messages_skips_other_event_types(tmp_path: Path) -> None:
    services = Runtime.open(Settings(state_dir=tmp_path))
    try:
        catalog = services.catalog
        catalog.patch("main", {})
        for n in range(5):
            catalog.append("main", "message", {"role": "user", "content": f"m{n}"})
            catalog.append("main", "tool", {"name": "t"})
        entry = catalog.require("main")
        found = read_messages(services.store, entry.session_id, 3)
        assert [event.data["content"] for event in found] == ["m2", "m3", "m4"]
        assert len(read_messages(services.store, entry.session_id, 100)) == 5
        assert read_messages(services.store, entry.session_id, 0) == []
    finally:
        services.close()
