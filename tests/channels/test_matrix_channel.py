"""The Matrix channel end to end: a real gateway whose bot account syncs with a real Synapse, and
a human on a second Matrix client. An invite is joined and a message answered in its room; a
bot kicked from a room ends the reply as a failed outbox row and holds up no other room; a
thread bound to a child session reaches it and gets its reply in the thread; a repeated
transaction id is one message. Without Synapse: the adapter is built only for a
``[channels.matrix]`` table, and what an event becomes inbound."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from nio import JoinedMembersResponse, RoomKickResponse

from clawline.channels.matrix import MatrixChannel
from clawline.channels.plugin import ChannelsPlugin
from clawline.channels.registry import ChannelRegistry
from clawline.channels.thread_bindings.planner import ThreadPlan, ThreadPlanner, bind_thread
from clawline.clock import SYSTEM_CLOCK, Clock
from clawline.config import ChannelsConfig, Settings, parse_config
from clawline.gateway.options import GatewaySettings
from clawline.records.outbox import OutboxItem, OutboxTarget
from clawline.testing import eventually
from clawline.testing.clock import FakeClock
from clawline.testing.live_gateway import RunningGateway, running_gateway
from clawline.testing.matrix_reader import MatrixReader, ReceivedMessage, matrix_reader
from clawline.testing.synapse import MatrixUser, Synapse, synapse_process

CHILD = "agent:main:subagent:00000000-0000-4000-8000-00000000000c"
MINUTE = 60_000
BOT = "@bot:example.org"
ROOM = "!room:example.org"


def configured(**table: Any) -> ChannelsConfig:
    raw = {"homeserver": "https://matrix.example.org", "userId": BOT, "accessToken": "t"}
    return parse_config({"channels": {"matrix": {**raw, **table}}}).channels


def registered(config: ChannelsConfig) -> ChannelRegistry:
    registry = ChannelRegistry()
    ChannelsPlugin(config).register_channels(registry)
    return registry


def test_without_a_matrix_table_there_is_no_matrix_channel() -> None:
    assert registered(ChannelsConfig()).ids() == ["webchat"]


async def test_a_matrix_table_registers_a_channel_with_threads() -> None:
    adapter = registered(configured(defaultAccount="bot")).get("matrix")
    assert isinstance(adapter, MatrixChannel)
    try:
        assert adapter.capabilities("bot").to_json() == {
            "adapterAvailable": True,
            "bindSupported": True,
            "placements": ["current", "child"],
        }
        assert not adapter.capabilities("other").adapter_available
        assert adapter.default_placement == "child"
        assert adapter.has_subagent_spawning_hook
        assert adapter.features.max_message_length == 30_000
        assert not adapter.synced  # nothing runs before start
    finally:
        await adapter.aclose()


def event(
    body: str = "hi", *, msgtype: str = "m.text", relation: dict[str, str] | None = None
) -> dict[str, Any]:
    content: dict[str, Any] = {"msgtype": msgtype, "body": body}
    if relation is not None:
        content["m.relates_to"] = relation
    return {
        "type": "m.room.message",
        "sender": "@alice:example.org",
        "event_id": "$e1",
        "content": content,
    }


async def test_what_an_event_becomes_inbound(caplog: pytest.LogCaptureFixture) -> None:
    table = configured().matrix
    assert table is not None
    adapter = MatrixChannel(table)
    try:
        message = adapter._inbound(ROOM, event())
        assert message is not None
        assert (message.channel, message.account_id, message.to, message.sender) == (
            "matrix",
            "default",
            ROOM,
            "@alice:example.org",
        )
        assert (message.text, message.message_id, message.chat, message.thread_id) == (
            "hi",
            "$e1",
            "group",  # a room the client knows nothing of
            None,
        )
        in_thread = event(relation={"rel_type": "m.thread", "event_id": "$root"})
        assert getattr(adapter._inbound(ROOM, in_thread), "thread_id", None) == "$root"
        skipped = [
            {**event(), "sender": BOT},  # its own
            event(msgtype="m.notice"),  # a bot's notice
            event(relation={"rel_type": "m.replace", "event_id": "$e0"}),  # an edit
            event("   "),
        ]
        assert [adapter._inbound(ROOM, source) for source in skipped] == [None] * 4
        encrypted = {"type": "m.room.encrypted", "sender": "@alice:example.org"}
        await adapter._on_event(ROOM, encrypted)
        await adapter._on_event(ROOM, encrypted)
        assert [r.getMessage() for r in caplog.records if "encrypt" in r.getMessage()] == [
            f"matrix: skipping encrypted events in {ROOM} (end-to-end encryption is not supported)"
        ]
    finally:
        await adapter.aclose()


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


@contextlib.asynccontextmanager
async def matrix_gateway(
    tmp_path: Path,
    synapse: Synapse,
    users: tuple[MatrixUser, MatrixUser],
    *,
    clock: Clock = SYSTEM_CLOCK,
    thread_bindings: dict[str, Any] | None = None,
) -> AsyncIterator[Matrix]:
    bot, human = users
    raw = {
        "agents": {"echoDelayMs": 0},
        "channels": {
            "matrix": {
                "homeserver": synapse.url,
                "userId": bot.user_id,
                # A device of its own per test: Synapse answers a repeated sync request of
                # one device from its cache for two minutes, replaying the previous test's.
                "password": bot.password,
                "syncTimeoutMs": 5_000,
                "threadBindings": {"spawnSubagentSessions": True, **(thread_bindings or {})},
            }
        },
    }
    settings = Settings(state_dir=tmp_path / "state", raw=raw)
    async with (
        running_gateway(
            tmp_path / "state",
            settings=settings,
            gateway_settings=GatewaySettings(port=0),
            clock=clock,
        ) as gateway,
        matrix_reader(synapse.url, human) as reader,
    ):
        adapter = gateway.runtime.channels.get("matrix")
        assert isinstance(adapter, MatrixChannel)
        await eventually(lambda: adapter.synced, what="the bot's first sync")
        yield Matrix(gateway, adapter, reader, bot)


@pytest.fixture
async def matrix(
    tmp_path: Path, synapse: Synapse, users: tuple[MatrixUser, MatrixUser]
) -> AsyncIterator[Matrix]:
    async with matrix_gateway(tmp_path, synapse, users) as opened:
        yield opened


@pytest.mark.matrix
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


@pytest.mark.matrix
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


@pytest.mark.matrix
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


@pytest.mark.matrix
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


@pytest.mark.matrix
async def test_focus_and_unfocus_in_a_room_and_activity_refreshes_the_binding(
    matrix: Matrix,
) -> None:
    runtime = matrix.gateway.runtime
    helper = "agent:main:helper"
    await runtime.call(runtime.catalog.patch, helper, {"label": "helper"})
    room_id = await matrix.room_with_bot()

    async def say(text: str) -> str:
        before = {m.event_id for m in matrix.human.messages(room_id)}
        await matrix.human.send_text(room_id, text)
        answer = await matrix.human.wait_for_message(
            room_id,
            lambda m: m.sender == matrix.bot.user_id and m.event_id not in before,
            timeout=15,
        )
        return answer.body

    focused = await say("/focus helper")
    assert focused == "Focused on helper (agent:main:helper): messages here go to that session now."
    [binding] = await runtime.call(runtime.store.bindings.for_session, helper)
    assert (binding.channel, binding.conversation_id) == ("matrix", room_id)
    assert await say("reply: via focus") == "via focus"
    [touched] = await runtime.call(runtime.store.bindings.for_session, helper)
    assert touched.last_activity_at > binding.last_activity_at  # idle expiry counts from here
    assert await say("/unfocus") == "Unfocused: agent:main:helper no longer answers here."
    assert await runtime.call(runtime.store.bindings.for_session, helper) == []
    assert await say("reply: own session again") == "own session again"


def _new_from(matrix: Matrix, room_id: str, seen: set[str]) -> Any:
    def matches(message: ReceivedMessage) -> bool:
        return message.sender == matrix.bot.user_id and message.event_id not in seen

    return matches


async def _spawn_scout(matrix: Matrix, room_id: str, task: str) -> tuple[ReceivedMessage, str]:
    """The human asks for a thread-bound child; the thread's root and the child's key."""
    await matrix.human.send_text(room_id, f"spawn thread scout: {task}")
    root = await matrix.human.wait_for_message(room_id, matrix.from_bot("🧵 scout"), timeout=15)
    runtime = matrix.gateway.runtime
    binding = await runtime.call(runtime.store.bindings.active, "matrix", "default", root.event_id)
    assert binding is not None
    assert (binding.placement, binding.parent_conversation_id) == ("child", room_id)
    spawned = await matrix.human.wait_for_message(
        room_id, matrix.from_bot("results: sessions_spawn accepted"), timeout=15
    )
    assert spawned.thread_root is None  # the parent's own answer, in the room
    return root, binding.session_key


async def _completion(matrix: Matrix, room_id: str) -> ReceivedMessage:
    def is_ack(message: ReceivedMessage) -> bool:
        return message.sender == matrix.bot.user_id and message.body.startswith("ack: ")

    answer = await matrix.human.wait_for_message(room_id, is_ack, timeout=20)
    await eventually(lambda: all(row.status == "delivered" for row in matrix.outbox()))
    return answer


@pytest.mark.matrix
async def test_a_thread_spawn_opens_a_thread_that_talks_to_the_child_and_gets_its_completion(
    matrix: Matrix,
) -> None:
    runtime = matrix.gateway.runtime
    room_id = await matrix.room_with_bot()

    root, child = await _spawn_scout(matrix, room_id, "reply: scouted")

    assert child.startswith("agent:main:subagent:")
    assert root.thread_root is None  # the root message lies in the room itself
    completion = await _completion(matrix, room_id)
    assert completion.body == "ack: scout completed successfully"
    assert completion.thread_root == root.event_id  # the child's completion, in its thread
    requester = f"agent:main:matrix:direct:{matrix.human.user_id}"
    await eventually(lambda: all(row.status == "delivered" for row in matrix.outbox()))
    [row] = [row for row in matrix.outbox() if row.kind == "completion"]
    assert (row.session_key, row.target.to, row.target.thread_id) == (
        requester,
        room_id,
        root.event_id,
    )

    [before] = await runtime.call(runtime.store.bindings.for_session, child)
    seen = {m.event_id for m in matrix.human.messages(room_id)}
    await matrix.human.send_text(room_id, "reply: in the thread", thread_root=root.event_id)
    answer = await matrix.human.wait_for_message(
        room_id, _new_from(matrix, room_id, seen), timeout=15
    )
    assert (answer.body, answer.thread_root) == ("in the thread", root.event_id)
    await eventually(lambda: all(row.status == "delivered" for row in matrix.outbox()))
    [reply] = [row for row in matrix.outbox() if row.text == "in the thread"]
    assert reply.session_key == child
    [after] = await runtime.call(runtime.store.bindings.for_session, child)
    assert after.last_activity_at > before.last_activity_at
    # one completion in the whole room, nothing in it twice
    bodies = [m.body for m in matrix.human.messages(room_id) if m.sender == matrix.bot.user_id]
    assert bodies.count("ack: scout completed successfully") == 1


@pytest.mark.matrix
async def test_a_thread_binding_expires_an_idle_time_after_its_last_message(
    tmp_path: Path, synapse: Synapse, users: tuple[MatrixUser, MatrixUser]
) -> None:
    clock = FakeClock()
    async with matrix_gateway(
        tmp_path, synapse, users, clock=clock, thread_bindings={"idleHours": 1}
    ) as matrix:
        runtime = matrix.gateway.runtime
        room_id = await matrix.room_with_bot()
        root, child = await _spawn_scout(matrix, room_id, "reply: scouted")
        await _completion(matrix, room_id)

        async def ask(text: str) -> str:
            """The session that answered ``text`` in the thread."""
            seen = {m.event_id for m in matrix.human.messages(room_id)}
            await matrix.human.send_text(room_id, f"reply: {text}", thread_root=root.event_id)
            answer = await matrix.human.wait_for_message(
                room_id, _new_from(matrix, room_id, seen), timeout=15
            )
            assert (answer.body, answer.thread_root) == (text, root.event_id)
            await eventually(lambda: all(row.status == "delivered" for row in matrix.outbox()))
            [row] = [row for row in matrix.outbox() if row.text == text]
            assert row.session_key is not None
            return row.session_key

        clock.advance(50 * MINUTE)
        assert await ask("at 50 minutes") == child
        clock.advance(50 * MINUTE)  # 100 minutes after binding, 50 after its last message
        assert await ask("at 100 minutes") == child
        clock.advance(61 * MINUTE)  # past an idle hour: the sweeper ends it

        async def unbound() -> bool:
            return await runtime.call(runtime.store.bindings.for_session, child) == []

        await eventually(unbound, what="the idle binding's end")
        [ended] = await runtime.call(
            lambda: runtime.store.bindings.for_session(child, active_only=False)
        )
        assert ended.unbind_reason == "idle-expired"
        assert ended.unbound_at == ended.last_activity_at + 61 * MINUTE
        own = f"agent:main:matrix:direct:{matrix.human.user_id}:thread:{root.event_id}"
        assert await ask("after the expiry") == own.lower()  # the thread's own session


@pytest.mark.matrix
async def test_what_is_said_while_the_gateway_is_down_is_answered_after_its_restart(
    tmp_path: Path, synapse: Synapse, users: tuple[MatrixUser, MatrixUser]
) -> None:
    async with matrix_gateway(tmp_path, synapse, users) as first:
        room_id = await first.room_with_bot()
        await first.human.send_text(room_id, "reply: before the stop")
        await first.human.wait_for_message(room_id, first.from_bot("before the stop"), timeout=15)
        runtime = first.gateway.runtime
        saved = await runtime.call(runtime.store.channel_cursors.get, "matrix", "default")
        assert saved is not None
    async with matrix_reader(synapse.url, users[1]) as meanwhile:
        await meanwhile.send_text(room_id, "reply: while it was down")

    async with matrix_gateway(tmp_path, synapse, users) as second:
        answer = await second.human.wait_for_message(
            room_id, second.from_bot("while it was down"), timeout=15
        )
        assert answer.thread_root is None
        await eventually(lambda: all(row.status == "delivered" for row in second.outbox()))
        bodies = [m.body for m in second.human.messages(room_id) if m.sender == users[0].user_id]
        assert bodies == ["before the stop", "while it was down"]  # nothing answered twice
