"""The Matrix channel end to end: a real gateway whose bot account syncs with a real Synapse, and
a human on a second Matrix client. An invite is joined and a message answered in its room; a
bot kicked from a room ends the reply as a failed outbox row and holds up no other room; a
thread bound to a child session reaches it and gets its reply in the thread; a repeated
transaction id is one message."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from nio import JoinedMembersResponse, RoomKickResponse

from clawline.channels.matrix import MatrixChannel
from clawline.channels.thread_bindings.planner import ThreadPlan, ThreadPlanner, bind_thread
from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.records.outbox import OutboxItem, OutboxTarget
from clawline.testing import eventually
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.testing.matrix_reader import MatrixReader, ReceivedMessage, matrix_reader
from clawline.testing.synapse import MatrixUser, Synapse, synapse_process

pytestmark = pytest.mark.matrix

CHILD = "agent:main:subagent:00000000-0000-4000-8000-00000000000c"


@pytest.fixture(scope="module")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    with synapse_process(tmp_path_factory.mktemp("synapse")) as server:
        yield server


@pytest.fixture(scope="module")
def users(synapse: Synapse) -> tuple[MatrixUser, MatrixUser]:
    return (
        synapse.register_blocking("clawbot", "clawbot-password"),
        synapse.register_blocking("human", "human-password"),
    )


@dataclass
class Matrix:
    gateway: RunningGateway
    adapter: MatrixChannel
    human: MatrixReader
    bot: MatrixUser

    async def room_with_bot(self) -> str:
        """A room the human created and the bot joined on its invite (two members: direct)."""
        room_id = await self.human.create_room(invite=(self.bot.user_id,))
        await eventually(lambda: self.is_member(room_id), what="the bot joined")
        return room_id

    async def is_member(self, room_id: str) -> bool:
        answer = await self.human.client.joined_members(room_id)
        assert isinstance(answer, JoinedMembersResponse), answer
        return self.bot.user_id in {member.user_id for member in answer.members}

    def from_bot(self, body: str) -> Any:
        def matches(message: ReceivedMessage) -> bool:
            return message.sender == self.bot.user_id and message.body == body

        return matches

    def outbox(self) -> list[OutboxItem]:
        return self.gateway.runtime.store.outbox.page(None, None, 100)


@pytest.fixture
async def matrix(
    tmp_path: Path, synapse: Synapse, users: tuple[MatrixUser, MatrixUser]
) -> AsyncIterator[Matrix]:
    bot, human = users
    raw = {
        "channels": {
            "matrix": {
                "homeserver": synapse.url,
                "userId": bot.user_id,
                # A device of its own per test: Synapse answers a repeated sync request of
                # one device from its cache for two minutes, replaying the previous test's.
                "password": bot.password,
                "syncTimeoutMs": 5_000,
                "threadBindings": {"spawnSubagentSessions": True},
            }
        }
    }
    settings = Settings(state_dir=tmp_path / "state", raw=raw)
    async with (
        running_gateway(
            tmp_path / "state", settings=settings, gateway_settings=GatewaySettings(port=0)
        ) as gateway,
        matrix_reader(synapse.url, human) as reader,
    ):
        adapter = gateway.runtime.channels.get("matrix")
        assert isinstance(adapter, MatrixChannel)
        await eventually(lambda: adapter.synced, what="the bot's first sync")
        yield Matrix(gateway, adapter, reader, bot)


async def test_an_invited_bot_joins_and_answers_in_the_room(matrix: Matrix) -> None:
    room_id = await matrix.room_with_bot()
    asked = await matrix.human.send_text(room_id, "reply: hello")

    answer = await matrix.human.wait_for_message(room_id, matrix.from_bot("hello"), timeout=15)

    assert (answer.msgtype, answer.thread_root) == ("m.text", None)
    key = f"agent:main:matrix:direct:{matrix.human.user_id}"
    runtime = matrix.gateway.runtime
    entry = await runtime.call(runtime.catalog.get, key)
    assert entry is not None
    assert (entry.extra["lastChannel"], entry.extra["lastTo"]) == ("matrix", room_id)
    await eventually(lambda: [row.status for row in matrix.outbox()] == ["delivered"])
    [row] = matrix.outbox()
    assert (row.remote_id, row.session_key, row.target.to) == (answer.event_id, key, room_id)
    assert asked != answer.event_id


async def test_a_bot_kicked_from_the_room_fails_the_reply_and_holds_up_no_other_room(
    matrix: Matrix,
) -> None:
    runtime = matrix.gateway.runtime
    gone = await matrix.room_with_bot()
    key = f"agent:main:matrix:direct:{matrix.human.user_id}"
    await matrix.human.send_text(gone, "sleep 1500\nreply: too late")

    async def run_started() -> bool:
        entry = await runtime.call(runtime.catalog.get, key)
        return entry is not None and entry.extra.get("lastTo") == gone

    await eventually(run_started, what="the run of the message")
    kicked = await matrix.human.client.room_kick(gone, matrix.bot.user_id, "go away")
    assert isinstance(kicked, RoomKickResponse), kicked

    await eventually(lambda: [row.status for row in matrix.outbox()] == ["failed"], timeout=15)
    [row] = matrix.outbox()
    assert row.target.to == gone
    assert row.last_error is not None
    assert row.last_error.startswith(f"matrix refused the message to {gone}: M_FORBIDDEN: ")
    assert row.attempts == 1

    other = await matrix.room_with_bot()
    await matrix.human.send_text(other, "reply: still here")
    await matrix.human.wait_for_message(other, matrix.from_bot("still here"), timeout=15)
    assert not [m for m in matrix.human.messages(gone) if m.sender == matrix.bot.user_id]


async def test_a_thread_bound_to_a_child_session_reaches_it_and_is_answered_in_it(
    matrix: Matrix,
) -> None:
    runtime = matrix.gateway.runtime
    room_id = await matrix.room_with_bot()
    await matrix.human.send_text(room_id, "reply: here")
    await matrix.human.wait_for_message(room_id, matrix.from_bot("here"), timeout=15)
    requester = f"agent:main:matrix:direct:{matrix.human.user_id}"
    planner = ThreadPlanner(
        catalog=runtime.catalog,
        store=runtime.store,
        workers=runtime.workers,
        channels=runtime.channels,
        config=runtime.agents_config.thread_bindings,
    )

    plan = await planner.prepare_subagent_thread(
        requester_session_key=requester, child_session_key=CHILD, agent_id="main", label="scout"
    )

    assert isinstance(plan, ThreadPlan), plan
    assert (plan.channel, plan.placement, plan.parent_conversation_id) == (
        "matrix",
        "child",
        room_id,
    )
    root = await matrix.human.wait_for_message(room_id, matrix.from_bot("🧵 scout"))
    assert root.event_id == plan.conversation_id
    await runtime.call(runtime.catalog.patch, CHILD, {"spawnedBy": requester})
    await runtime.call(bind_thread, runtime.store, plan, CHILD, runtime.clock.now_ms())

    await matrix.human.send_text(room_id, "reply: from the child", thread_root=root.event_id)

    answer = await matrix.human.wait_for_message(
        room_id, matrix.from_bot("from the child"), timeout=15
    )
    assert answer.thread_root == root.event_id
    assert answer.content["m.relates_to"]["m.in_reply_to"] == {"event_id": root.event_id}
    await eventually(lambda: all(row.status == "delivered" for row in matrix.outbox()))
    [row] = [row for row in matrix.outbox() if row.text == "from the child"]
    assert (row.session_key, row.target.thread_id) == (CHILD, root.event_id)


async def test_the_same_transaction_id_is_one_message(matrix: Matrix) -> None:
    room_id = await matrix.room_with_bot()
    target = OutboxTarget("matrix", "default", room_id, None)
    once = OutboxItem(target, "only once", "reply", "dedupe-1", 0, id=4242)
    after = OutboxItem(target, "after it", "reply", "dedupe-2", 0, id=4243)

    first = await matrix.adapter.send(once)
    again = await matrix.adapter.send(once)
    await matrix.adapter.send(after)

    assert first is not None
    assert again == first
    await matrix.human.wait_for_message(room_id, matrix.from_bot("after it"))
    assert [m.body for m in matrix.human.messages(room_id) if m.sender != matrix.human.user_id] == [
        "only once",
        "after it",
    ]
