"""sessions_spawn refusals before the policy checks: channel-delivery keys, argument types and
runtime-bound options, and the ACP runtime without a backend.
The policy checks are in ``test_spawn_policy``; the texts and helpers here are shared with it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawline.channels import ChannelRegistry
from clawline.runtime import Runtime
from clawline.testing.channels import FakeChannel
from tests.collab.conftest import MakeServices
from tests.collab.support import MAIN, runner_of
from tests.collab.test_spawn_lineage import (
    descendants_of,
    limits,
    make_requester,
    spawn,
    tasks_owned_by,
)
from tests.collab.threads_support import channel_config

INVALID_AGENT = (
    'Invalid agentId "{}". Agent IDs must match [a-z0-9][a-z0-9_-]{{0,63}}. '
    "Use agents_list to discover valid targets."
)
SESSION_NEEDS_THREAD = (
    'mode="session" requires thread=true so the subagent can stay bound to a thread.'
)
DEPTH = "sessions_spawn is not allowed at this depth (current depth: {}, max: {})"
MAX_CHILDREN = "sessions_spawn has reached max active children for this session ({}/{})"
REQUIRE_AGENT_ID = (
    "sessions_spawn requires explicit agentId when requireAgentId is configured. "
    "Use agents_list to see allowed agent ids."
)
NOT_ALLOWED = "agentId is not allowed for sessions_spawn (allowed: {})"
UNKNOWN_AGENT = 'agentId "{}" is not in the configured agent registry (allowed: {})'
SANDBOX_REQUIRE = (
    'sessions_spawn sandbox="require" needs a sandboxed target runtime. '
    'Pick a sandboxed agentId or use sandbox="inherit".'
)
THINKING = 'Invalid thinking level "{}". Use one of: off, minimal, low, medium, high, xhigh.'
ACP_BACKEND = "ACP runtime backend is not configured. Install and enable the acpx runtime plugin."
ACP_SESSION_NEEDS_THREAD = (
    'mode="session" requires thread=true so the ACP session can stay bound to a thread.'
)
NO_HOOKS = (
    "thread=true is unavailable because no channel plugin registered subagent_spawning hooks."
)


def channel_key_text(key: str) -> str:
    return (
        f'sessions_spawn does not support "{key}". Use "message" or "sessions_send" for '
        "channel delivery."
    )


async def refused(services: Runtime, requester: str = MAIN, **args: Any) -> dict[str, Any]:
    """A refusal; and nothing was created for it (no session, no run, no task, no turn)."""
    before = (
        descendants_of(services, requester),
        len(services.store.runs.for_requester(requester)),
        len(tasks_owned_by(services, requester)),
    )
    result = await spawn(services, requester, **args)
    assert result["status"] in ("error", "forbidden"), result
    after = (
        descendants_of(services, requester),
        len(services.store.runs.for_requester(requester)),
        len(tasks_owned_by(services, requester)),
    )
    assert after == before
    await asyncio.sleep(0)  # a run that was wrongly started would begin now
    for call in runner_of(services).calls:
        assert services.store.get(call.session_key) is not None, call
    return result


async def forum_services(make_services: MakeServices, channel: FakeChannel) -> Runtime:
    """Main on the "forum" channel (thread-bound spawns enabled) served by ``channel``."""
    raw = channel_config("forum", channel_level={"spawnSubagentSessions": True})
    services = await make_services(raw, channels=ChannelRegistry([channel]))
    context = {"channel": "forum", "to": "room-1", "accountId": "acct"}
    await services.call(services.catalog.patch, MAIN, {"deliveryContext": context})
    return services


def outcome(result: dict[str, Any]) -> tuple[str, str]:
    return result["status"], result["error"]


@pytest.fixture
async def main(services: Runtime) -> Runtime:
    await make_requester(services)
    return services


# --- before the policy checks ------------------------------------------------------------------


@pytest.mark.parametrize(
    "key", ["target", "transport", "channel", "to", "threadId", "thread_id", "replyTo", "reply_to"]
)
async def test_channel_delivery_keys_are_refused(main: Runtime, key: str) -> None:
    result = await refused(main, task="t", **{key: "somewhere"})
    assert result == {"status": "error", "error": channel_key_text(key)}


async def test_channel_key_wins_over_every_other_error(main: Runtime) -> None:
    result = await refused(main, task=7, mode="forever", runtime="acp", to=None)
    assert outcome(result) == ("error", channel_key_text("to"))


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({}, "task required"),
        ({"task": "   "}, "task required"),
        ({"task": 7}, "task required"),
        ({"task": "t", "label": 3}, "label must be a string"),
        ({"task": "t", "label": "x" * 513}, "label must be 1 to 512 characters"),
        ({"task": "t", "runtime": "docker"}, 'runtime must be "subagent" or "acp"'),
        ({"task": "t", "runTimeoutSeconds": -1}, "runTimeoutSeconds must be a number >= 0"),
        ({"task": "t", "runTimeoutSeconds": "9"}, "runTimeoutSeconds must be a number >= 0"),
        ({"task": "t", "timeoutSeconds": True}, "timeoutSeconds must be a number >= 0"),
        ({"task": "t", "thread": "yes"}, "thread must be a boolean"),
        ({"task": "t", "mode": "forever"}, 'mode must be "run" or "session"'),
        ({"task": "t", "cleanup": "archive"}, 'cleanup must be "delete" or "keep"'),
        (
            {"task": "t", "expectsCompletionMessage": 0},
            "expectsCompletionMessage must be a boolean",
        ),
        ({"task": "t", "agentId": 5}, "agentId must be a string"),
        ({"task": "t", "model": ["offline"]}, "model must be a string"),
        ({"task": "t", "thinking": 2}, "thinking must be a string"),
        ({"task": "t", "sandbox": "strict"}, 'sandbox must be "inherit" or "require"'),
        ({"task": "t", "streamTo": "child"}, 'streamTo must be "parent"'),
        ({"task": "t", "lightContext": "on"}, "lightContext must be a boolean"),
        (
            {"task": "t", "attachments": "file.txt"},
            "attachments must be an array of {name, content, encoding?, mimeType?}",
        ),
        (
            {"task": "t", "attachments": [{"name": "a", "content": "b", "encoding": "hex"}]},
            'attachments encoding must be "utf8" or "base64"',
        ),
        ({"task": "t", "attachAs": "dir"}, "attachAs must be an object"),
    ],
)
async def test_argument_errors(main: Runtime, args: dict[str, Any], error: str) -> None:
    assert await refused(main, **args) == {"status": "error", "error": error}


async def test_first_argument_error_wins(main: Runtime) -> None:
    assert outcome(await refused(main, task=None, mode="forever")) == ("error", "task required")
    assert outcome(await refused(main, task="t", runtime="x", mode="forever")) == (
        "error",
        'runtime must be "subagent" or "acp"',
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            {"resumeSessionId": "abc"},
            "resumeSessionId is only supported for runtime=acp; got runtime=subagent",
        ),
        (
            {"streamTo": "parent"},
            "streamTo is only supported for runtime=acp; got runtime=subagent",
        ),
        (
            {"runtime": "acp", "lightContext": True},
            "lightContext is only supported for runtime='subagent'.",
        ),
        (
            {"runtime": "acp", "attachments": [{"name": "a.txt", "content": "x"}]},
            "attachments are currently unsupported for runtime=acp; use runtime=subagent or "
            "remove attachments",
        ),
    ],
)
async def test_options_of_the_other_runtime(
    main: Runtime, args: dict[str, Any], error: str
) -> None:
    assert await refused(main, task="t", **args) == {"status": "error", "error": error}


async def test_argument_errors_come_before_runtime_options(main: Runtime) -> None:
    result = await refused(main, task="t", resumeSessionId="abc", mode="forever")
    assert outcome(result) == ("error", 'mode must be "run" or "session"')


# --- ACP without a backend -----------------------------------------------------------------------


async def test_acp_without_backend(main: Runtime) -> None:
    result = await refused(main, task="t", runtime="acp", agentId="codex")
    assert result == {"status": "error", "error": ACP_BACKEND, "errorCode": "spawn_failed"}


async def test_acp_session_mode_needs_a_thread_first(main: Runtime) -> None:
    result = await refused(main, task="t", runtime="acp", mode="session")
    assert result == {
        "status": "error",
        "error": ACP_SESSION_NEEDS_THREAD,
        "errorCode": "thread_required",
    }


async def test_acp_skips_the_subagent_checks(make_services: MakeServices) -> None:
    services = await make_services(limits(requireAgentId=True))
    await make_requester(services)
    result = await refused(services, task="t", runtime="acp")
    assert outcome(result) == ("error", ACP_BACKEND)
