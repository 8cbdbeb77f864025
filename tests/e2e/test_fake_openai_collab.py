"""Spawn, agent-to-agent ping-pong and completion announces end to end, with a configured
OpenAI-compatible model (the fake model server) behind a real gateway on real sockets.

The parent (``agent:main:main``) is asked, through ``chat.send``, to delegate; its model calls
``sessions_spawn`` twice (labels ``alpha`` and ``beta``). Alpha's model calls ``sessions_send``
to beta by label and waits; beta answers round 1; then OpenClaw's ping-pong runs:
turns alternate starting on the requester (alpha), each step's incoming message is the other
side's previous reply, and it stops at ``maxPingPongTurns`` or at a reply that is exactly
``REPLY_SKIP``. Then beta runs the announce step, whose reply is posted to beta's transcript.
Both children complete and the parent gets each completion exactly once and takes a turn on it.

The fake server's script is a function: it tells the sessions apart by the first user message
of the request (the parent's prompt, or the child's ``[Subagent Task]:`` line) and the steps by
the system prompt the gateway sends.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clawline.client.connection import GatewayClient
from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.testing.fake_openai import FakeModelServer, FakeReply, FakeRequest, FakeToolCall
from clawline.testing.live_gateway import RunningGateway, running_gateway
from tests.e2e.support import until

TOKEN = "fake-openai-collab-token"
PARENT = "agent:main:main"
DELEGATE = "Delegate the ping-pong to two helpers."
ALPHA_TASK = "ALPHA: ask beta for a pong"
BETA_TASK = "BETA: answer whoever pings you"
PING = "ping from alpha"
ROUND_ONE = "beta round one"
BETA_READY = "beta is ready"
ANNOUNCE = "beta announces: the ping-pong is over"
PARENT_SPAWNED = "Spawned alpha and beta; waiting for their completions."
COMPLETION_MARKER = "[Internal task completion event]"
TURN = re.compile(r"^Turn (\d+) of (\d+)\.$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Seen:
    """One request the fake model server got, as the script understood it."""

    who: str
    """``parent`` | ``alpha`` | ``beta``."""
    kind: str
    """``task`` | ``tools`` (after tool results) | ``a2a`` (round 1 on the target) |
    ``reply_step`` | ``announce_step`` | ``completion``."""
    turn: int | None
    system: str
    last: str
    """The content of the request's last message."""
    tools: tuple[str, ...]


def _pong(who: str, turn: int) -> str:
    return f"{who} pong {turn}"


class CollabModel:
    """The fake model of the three sessions (module docstring)."""

    def __init__(self, skip_on_turn: int | None) -> None:
        self.skip_on_turn = skip_on_turn
        self.seen: list[Seen] = []
        self.beta_exists = asyncio.Event()

    async def __call__(self, request: FakeRequest) -> FakeReply:
        messages: list[dict[str, Any]] = request.body["messages"]
        system = str(messages[0]["content"]) if messages[0]["role"] == "system" else ""
        first = next(str(m["content"]) for m in messages if m["role"] == "user")
        who = "alpha" if ALPHA_TASK in first else "beta" if BETA_TASK in first else "parent"
        last = messages[-1]
        kind, turn = _classify(system, last)
        tools = tuple(tool["function"]["name"] for tool in request.body.get("tools", ()))
        self.seen.append(Seen(who, kind, turn, system, str(last.get("content") or ""), tools))
        if who == "beta":
            self.beta_exists.set()
        elif who == "alpha" and kind == "task":
            # the parent spawns beta right after alpha: alpha's send by label needs beta to exist
            await asyncio.wait_for(self.beta_exists.wait(), 10)
        return self._answer(who, kind, turn, last)

    def _answer(self, who: str, kind: str, turn: int | None, last: dict[str, Any]) -> FakeReply:
        if kind == "reply_step":
            assert turn is not None
            return FakeReply(text="REPLY_SKIP" if turn == self.skip_on_turn else _pong(who, turn))
        if kind == "announce_step":
            return FakeReply(text=ANNOUNCE)
        if kind == "a2a":
            return FakeReply(text=ROUND_ONE)
        if who == "parent":
            if kind == "completion":
                count = str(last["content"]).count(COMPLETION_MARKER)
                return FakeReply(text=f"Noted {count} completion(s).")
            if kind == "tools":
                return FakeReply(text=PARENT_SPAWNED)
            return FakeReply(
                tool_calls=(
                    FakeToolCall("sessions_spawn", {"task": ALPHA_TASK, "label": "alpha"}, "sp1"),
                    FakeToolCall("sessions_spawn", {"task": BETA_TASK, "label": "beta"}, "sp2"),
                )
            )
        if who == "alpha":
            if kind == "tools":
                result = json.loads(str(last["content"]))
                return FakeReply(text=f"alpha finished: beta said {result.get('reply')}")
            send = {"label": "beta", "message": PING, "timeoutSeconds": 20}
            return FakeReply(tool_calls=(FakeToolCall("sessions_send", send, "send1"),))
        return FakeReply(text=BETA_READY)

    def of(self, who: str | None = None, kind: str | None = None) -> list[Seen]:
        return [s for s in self.seen if who in (None, s.who) and kind in (None, s.kind)]


def _classify(system: str, last: dict[str, Any]) -> tuple[str, int | None]:
    if "Agent-to-agent reply step:" in system:
        match = TURN.search(system)
        assert match is not None, system
        return "reply_step", int(match[1])
    if "Agent-to-agent announce step:" in system:
        return "announce_step", None
    if last["role"] == "tool":
        return "tools", None
    if "Agent-to-agent message context:" in system:
        return "a2a", None
    if COMPLETION_MARKER in str(last.get("content")):
        return "completion", None
    return "task", None


@dataclass(frozen=True, slots=True)
class Case:
    max_turns: int
    skip_on_turn: int | None
    steps: tuple[tuple[str, int], ...]
    """The ping-pong turns OpenClaw's rules imply: ``(session, turn)`` in order."""


CASES = {
    # maxPingPongTurns 2: turn 1 on the requester, turn 2 on the target, then the limit
    "stops-at-the-limit": Case(2, None, (("alpha", 1), ("beta", 2))),
    # maxPingPongTurns 5: alpha answers turn 3 with REPLY_SKIP, so no turn 4 follows
    "stops-at-reply-skip": Case(5, 3, (("alpha", 1), ("beta", 2), ("alpha", 3))),
}


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> Case:
    return CASES[request.param]


@pytest.fixture
def model_script(case: Case) -> CollabModel:
    return CollabModel(case.skip_on_turn)


@pytest.fixture
async def model(model_script: CollabModel) -> AsyncIterator[FakeModelServer]:
    async with FakeModelServer(model_script) as server:
        yield server


@pytest.fixture
async def gateway(
    tmp_path: Path, model: FakeModelServer, case: Case
) -> AsyncIterator[RunningGateway]:
    raw = {
        "agents": {"defaults": {"model": "openai/fake-collab"}},
        "models": {
            "providers": {
                "openai": {"baseUrl": model.openai_base_url, "apiKey": "sk-e2e", "maxRetries": 0}
            }
        },
        "tools": {
            "agentToAgent": {"enabled": True},
            "sessions": {"visibility": "agent"},  # alpha and beta are siblings, not parent/child
            "subagents": {"tools": {"allow": ["sessions_send"]}},
        },
        "session": {"agentToAgent": {"maxPingPongTurns": case.max_turns}},
    }
    state = tmp_path / "state"
    async with running_gateway(
        state,
        settings=Settings(state_dir=state, raw=raw),
        gateway_settings=GatewaySettings(port=0, auth="token", token=TOKEN),
    ) as running:
        yield running


@pytest.fixture
async def client(gateway: RunningGateway) -> AsyncIterator[GatewayClient]:
    connected = await GatewayClient.connect(gateway.url, token=TOKEN)
    try:
        yield connected
    finally:
        await connected.close()


async def _history(client: GatewayClient, key: str) -> list[dict[str, Any]]:
    answer = await client.request("chat.history", {"sessionKey": key, "limit": 1000})
    assert isinstance(answer, dict)
    messages: list[dict[str, Any]] = answer["messages"]
    return messages


async def _tasks(client: GatewayClient) -> list[dict[str, Any]]:
    answer = await client.request("tasks.list", {"ownerKey": PARENT})
    assert isinstance(answer, dict)
    tasks: list[dict[str, Any]] = answer["tasks"]
    return tasks


def _text(message: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in message.get("content", ()))


async def test_spawn_ping_pong_and_both_completion_announces(
    gateway: RunningGateway, client: GatewayClient, model_script: CollabModel, case: Case
) -> None:
    params = {"sessionKey": PARENT, "message": DELEGATE, "idempotencyKey": "delegate-1"}
    ack = await client.request("chat.send", params)
    assert isinstance(ack, dict)
    assert ack["status"] == "started"

    async def settled() -> list[dict[str, Any]] | None:
        tasks = await _tasks(client)
        if len(tasks) != 2 or any(t["deliveryStatus"] != "delivered" for t in tasks):
            return None
        parent = await _history(client, PARENT)
        delivered = [m for m in parent if "announce" in m]
        runs = sorted(r for m in delivered for r in m["announce"]["runIds"])
        if runs != sorted(t["runId"] for t in tasks) or parent[-1]["role"] != "assistant":
            return None
        if parent[-1]["runId"] != delivered[-1]["runId"]:
            return None
        children = [t["childSessionKey"] for t in tasks]
        beta_key = next(t["childSessionKey"] for t in tasks if t["label"] == "beta")
        if not any(m.get("a2aAnnounce") for m in await _history(client, beta_key)):
            return None
        if any(gateway.runtime.runs.has_active_run(k) for k in [PARENT, *children]):
            return None
        return tasks

    tasks = await until(settled, timeout=30, what="both completions and the announce step")
    by_label = {task["label"]: task for task in tasks}
    alpha, beta = by_label["alpha"]["childSessionKey"], by_label["beta"]["childSessionKey"]
    assert {t["status"] for t in tasks} == {"succeeded"}

    # the parent's turn: two spawns in one response, then its answer
    parent_task = model_script.of("parent", "task")
    assert [s.last for s in parent_task] == [DELEGATE]
    assert "sessions_spawn" in parent_task[0].tools
    after_spawns = model_script.of("parent", "tools")
    assert [json.loads(s.last)["status"] for s in after_spawns] == ["accepted"]
    first_turn = [(m["role"], _text(m)) for m in await _history(client, PARENT)][:5]
    assert [role for role, _ in first_turn] == ["user", "assistant", "tool", "tool", "assistant"]
    assert (first_turn[0][1], first_turn[4][1]) == (DELEGATE, PARENT_SPAWNED)
    # the children only get the tool the subagent policy allows them
    assert {s.tools for s in model_script.seen if s.who != "parent"} == {("sessions_send",)}

    # alpha's send: beta answers round 1 on the message alpha sent
    a2a = model_script.of("beta", "a2a")
    assert [s.last for s in a2a] == [PING]
    assert f"Agent 1 (requester) session: {alpha}." in a2a[0].system
    alpha_result = json.loads(model_script.of("alpha", "tools")[0].last)
    assert (alpha_result["status"], alpha_result["reply"]) == ("ok", ROUND_ONE)
    assert alpha_result["sessionKey"] == beta

    # the ping-pong: exactly the turns the rules imply, alternating from the requester, each on the
    # other side's previous reply
    steps = model_script.of(kind="reply_step")
    assert [(s.who, s.turn) for s in steps] == list(case.steps)
    incoming = [ROUND_ONE] + [_pong(who, turn) for who, turn in case.steps[:-1]]
    assert [s.last for s in steps] == incoming
    for step in steps:
        current = "Agent 1 (requester)" if step.who == "alpha" else "Agent 2 (target)"
        assert f"Current agent: {current}." in step.system
        assert f"Turn {step.turn} of {case.max_turns}." in step.system
    assert [s.last for s in model_script.of("beta", "reply_step")] == [_pong("alpha", 1)]

    # the announce step on beta, once, with round 1 and the latest real reply; posted to beta
    announces = model_script.of(kind="announce_step")
    assert [s.who for s in announces] == ["beta"]
    assert f"Original request: {PING}" in announces[0].system
    assert f"Round 1 reply: {ROUND_ONE}" in announces[0].system
    assert f"Latest reply: {_pong('beta', 2)}" in announces[0].system
    posted = [m for m in await _history(client, beta) if m.get("a2aAnnounce")]
    assert [(m["role"], _text(m)) for m in posted] == [("assistant", ANNOUNCE)]

    # both completions reached the parent exactly once, and it took a turn on each delivery
    parent = await _history(client, PARENT)
    delivered = [m for m in parent if "announce" in m]
    counted = Counter(run for m in delivered for run in m["announce"]["runIds"])
    assert counted == Counter({by_label["alpha"]["runId"]: 1, by_label["beta"]["runId"]: 1})
    events = [event for m in delivered for event in m["internalEvents"]]
    assert sorted(e["childSessionKey"] for e in events) == sorted([alpha, beta])
    replies = {m["runId"] for m in parent if m["role"] == "assistant"}
    assert {m["runId"] for m in delivered} <= replies
    completions = model_script.of("parent", "completion")
    assert len(completions) == len(delivered)
    shown = Counter(key for s in completions for key in (alpha, beta) if key in s.last)
    assert shown == Counter({alpha: 1, beta: 1})
    alpha_event = next(e for e in events if e["childSessionKey"] == alpha)
    assert alpha_event["result"] == f"alpha finished: beta said {ROUND_ONE}"
    assert alpha_event["status"] == "ok"
