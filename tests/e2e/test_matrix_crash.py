"""A completion survives a SIGKILL on its way to Matrix: a real gateway process, a real Synapse.

The human asks the bot in a room for a thread-bound child; the gateway kills itself
(``tests/e2e/spawn_crash_plugin.py``) right after the child's end is committed and before the
requester has answered the completion. The next gateway process on the same state directory
delivers it: the completion arrives in the child's thread, once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from nio import JoinedMembersResponse

from clawline.testing.matrix_reader import MatrixReader, ReceivedMessage, matrix_reader
from clawline.testing.synapse import MatrixUser, Synapse, synapse_process
from tests.e2e.support import all_tasks, clean_env, gateway_process, opened_store, until

REPO = Path(__file__).resolve().parents[2]
ACK = "ack: scout completed successfully"


@pytest.fixture(scope="module")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    with synapse_process(tmp_path_factory.mktemp("synapse")) as server:
        yield server


@pytest.fixture
async def human(synapse: Synapse) -> AsyncIterator[MatrixReader]:
    user = await synapse.register("crash-human", "crash-human-password")
    async with matrix_reader(synapse.url, user) as reader:
        yield reader


def _config(synapse: Synapse, bot: MatrixUser, arm: Path) -> str:
    return f"""
[agents]
echoDelayMs = 0

[channels.matrix]
homeserver = "{synapse.url}"
userId = "{bot.user_id}"
passwordEnv = "CRASH_BOT_PASSWORD"
deviceId = "CLAWLINECRASH"
syncTimeoutMs = 5000
threadBindings = {{ spawnSubagentSessions = true }}

[plugins]
enabled = ["tests.e2e.spawn_crash_plugin"]

[plugins.entries."spawn-crash".config]
endArmFile = "{arm}"
"""


async def _joined(human: MatrixReader, room_id: str, bot: MatrixUser) -> bool:
    answer = await human.client.joined_members(room_id)
    assert isinstance(answer, JoinedMembersResponse), answer
    return bot.user_id in {member.user_id for member in answer.members}


@pytest.mark.matrix
async def test_a_completion_cut_off_by_a_sigkill_reaches_the_matrix_thread_once(
    tmp_path: Path, synapse: Synapse, human: MatrixReader
) -> None:
    bot = await synapse.register("crash-bot", "crash-bot-password")
    state = tmp_path / "state"
    state.mkdir()
    arm = tmp_path / "kill-at-the-child-end"
    (state / "config.toml").write_text(_config(synapse, bot, arm), encoding="utf-8")
    env = clean_env(state, CRASH_BOT_PASSWORD=bot.password, PYTHONPATH=str(REPO))

    def from_bot(body: str) -> Callable[[ReceivedMessage], bool]:
        def matches(message: ReceivedMessage) -> bool:
            return message.sender == bot.user_id and message.body == body

        return matches

    async with gateway_process(env, tmp_path / "life1.log") as life1:
        room_id = await human.create_room(invite=(bot.user_id,))
        arm.touch()  # the child's end kills the gateway
        # The bot joins on the invite; until it has, the message would reach nobody.
        await until(lambda: _joined(human, room_id, bot), timeout=20, what="the bot joined")
        await human.send_text(room_id, "spawn thread scout: sleep 1500\\nreply: scouted")
        root = await human.wait_for_message(room_id, from_bot("🧵 scout"), timeout=20)
        await human.wait_for_message(
            room_id, from_bot("results: sessions_spawn accepted"), timeout=20
        )
        assert await asyncio.wait_for(life1.process.wait(), 30) == -9
    assert not arm.exists()
    assert not [m for m in human.messages(room_id) if m.body.startswith("ack: ")]
    with opened_store(state) as store:
        [task] = all_tasks(store)
        assert task.status == "succeeded"  # the end was committed before the kill

    async with gateway_process(env, tmp_path / "life2.log") as life2:
        ack = await human.wait_for_message(room_id, from_bot(ACK), timeout=30)
        assert ack.thread_root == root.event_id

        assert await life2.terminate() == 0
    with opened_store(state) as store:
        completions = [
            row for row in store.outbox.page(None, None, 100) if row.kind == "completion"
        ]
        assert [(row.status, row.text) for row in completions] == [("delivered", ACK)]
    await human.sync_once()
    assert [m.body for m in human.messages(room_id)].count(ACK) == 1
