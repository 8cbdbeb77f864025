"""The Matrix test harness: a real Synapse on 127.0.0.1, two users, read back with nio clients.

One Synapse serves the whole module (it starts in about two seconds); each test makes its own
rooms. The last tests start servers of their own to show the start-up and shut-down halves.
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from clawline.testing.matrix_reader import MatrixReader, ReceivedMessage, matrix_reader
from clawline.testing.synapse import (
    MatrixUser,
    Synapse,
    SynapseError,
    running_synapse,
    synapse_process,
)

pytestmark = pytest.mark.matrix


@pytest.fixture(scope="module")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    with synapse_process(tmp_path_factory.mktemp("synapse")) as server:
        yield server


@pytest.fixture(scope="module")
def users(synapse: Synapse) -> tuple[MatrixUser, MatrixUser]:
    return (
        synapse.register_blocking("alice", "alice-password"),
        synapse.register_blocking("bob", "bob-password"),
    )


@pytest.fixture
async def alice(
    synapse: Synapse, users: tuple[MatrixUser, MatrixUser]
) -> AsyncIterator[MatrixReader]:
    async with matrix_reader(synapse.url, users[0]) as reader:
        yield reader


@pytest.fixture
async def bob(
    synapse: Synapse, users: tuple[MatrixUser, MatrixUser]
) -> AsyncIterator[MatrixReader]:
    async with matrix_reader(synapse.url, users[1]) as reader:
        yield reader


async def shared_room(alice: MatrixReader, bob: MatrixReader) -> str:
    """A room alice created and bob joined on her invite."""
    room_id = await alice.create_room(invite=(bob.user_id,))
    assert await bob.wait_for_invite(room_id) == room_id
    await bob.join(room_id)
    return room_id


def port_is_open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
    except OSError:
        return False
    return True


def test_registered_users_are_on_the_test_server(
    synapse: Synapse, users: tuple[MatrixUser, MatrixUser]
) -> None:
    alice, bob = users
    assert synapse.url == f"http://127.0.0.1:{synapse.port}"
    assert synapse.server_name == "localhost"
    assert (alice.user_id, bob.user_id) == ("@alice:localhost", "@bob:localhost")
    assert alice.access_token
    assert alice.device_id
    assert alice.access_token != bob.access_token


async def test_a_message_reaches_the_invited_user(alice: MatrixReader, bob: MatrixReader) -> None:
    room_id = await shared_room(alice, bob)
    event_id = await alice.send_text(room_id, "hello bob")

    got = await bob.wait_for_message(room_id, lambda m: m.body == "hello bob")

    assert (got.event_id, got.sender, got.msgtype, got.thread_root) == (
        event_id,
        "@alice:localhost",
        "m.text",
        None,
    )


async def test_a_thread_reply_is_seen_with_its_root(alice: MatrixReader, bob: MatrixReader) -> None:
    room_id = await shared_room(alice, bob)
    root = await alice.send_text(room_id, "a question")
    await bob.wait_for_message(room_id, lambda m: m.event_id == root)

    reply = await bob.send_text(room_id, "an answer", thread_root=root)
    got = await alice.wait_for_message(room_id, lambda m: m.sender == bob.user_id)

    assert (got.event_id, got.body, got.thread_root) == (reply, "an answer", root)
    assert got.content["m.relates_to"]["rel_type"] == "m.thread"


async def test_waiting_for_a_message_that_never_comes_fails(
    alice: MatrixReader, bob: MatrixReader
) -> None:
    room_id = await shared_room(alice, bob)
    await alice.send_text(room_id, "only this")
    await bob.wait_for_message(room_id, lambda m: m.body == "only this")

    def never(message: ReceivedMessage) -> bool:
        return message.body == "something else"

    with pytest.raises(AssertionError, match="'only this'"):
        await bob.wait_for_message(room_id, never, timeout=0.3)


def test_registration_with_a_wrong_secret_is_refused(synapse: Synapse) -> None:
    impostor = dataclasses.replace(synapse, registration_secret="not-the-secret")

    with pytest.raises(SynapseError, match="403"):
        impostor.register_blocking("mallory", "mallory-password")

    with pytest.raises(SynapseError, match="403"):  # the first refusal made no mallory
        impostor.register_blocking("mallory", "mallory-password")


async def test_the_server_is_gone_after_the_context_manager(tmp_path: Path) -> None:
    async with running_synapse(tmp_path / "synapse") as server:
        user = await server.register("carol", "carol-password")
        assert user.user_id == "@carol:localhost"
        assert server.running
        assert port_is_open(server.port)

    assert server.process.returncode is not None
    assert not port_is_open(server.port)


def test_a_server_that_cannot_start_raises_with_its_log(tmp_path: Path) -> None:
    with (
        pytest.raises(SynapseError, match="exited with") as failure,
        synapse_process(tmp_path / "synapse", server_name="not a server name!"),
    ):
        pytest.fail("Synapse started with an invalid server name")

    assert "Server name 'not a server name!' has an invalid format" in str(failure.value)
