"""Channel benchmark: 1,000 inbound messages across 100 Matrix rooms, answered through the outbox.

Run from the repository root::

    .venv/bin/python bench/channels.py [--rooms 100] [--per-room 10] [--echo-delay-ms 0]

A real Synapse on loopback (:mod:`clawline.testing.synapse`, SQLite), a gateway whose bot
account syncs with it (``[channels.matrix]``, the offline model), and a human on a second
Matrix client. The human creates the rooms and invites the bot; once it has joined them all,
the human sends ``reply: r<room>-m<n>`` into every room, ten rounds of one message per room
sent at once, as fast as the homeserver takes them, and reads the bot's answers back.

Measured, per message: inbound-to-delivered latency = the server timestamp of the bot's answer
minus the server timestamp of the human's message (both stamped by the one homeserver, so no
clock skew); printed as median and p99, with the throughput: messages answered per second from
the first message sent to the last answer read. Also checked: every message answered exactly
once, every outbox row ``delivered``.

The same workload runs first against a bare echo bot: one matrix-nio client in the same
process that syncs and sends each ``reply:`` body back (every answer of a sync at once),
nothing stored, nothing queued. What it reaches is what this machine and this homeserver allow:
Synapse is one Python process, and on two cores it is the bottleneck (it holds a core at ~95 %
while the gateway's process uses ~10-15 %). Target, against that floor measured in the same
run: the gateway answers >= 80 % of its messages per second with a p99 <= 125 % of its p99,
every message once. ``--floor`` / ``--gateway-only`` run one side alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from nio import AsyncClient, JoinedMembersResponse, SyncResponse

from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.testing import eventually
from clawline.testing.live_gateway import running_gateway
from clawline.testing.matrix_reader import MatrixReader, matrix_reader
from clawline.testing.synapse import running_synapse

TARGET_RATE_OF_FLOOR = 0.8
"""The gateway answers at least this share of the bare echo bot's messages per second."""
TARGET_P99_OF_FLOOR = 1.25
"""… with a p99 latency at most this multiple of the echo bot's."""


async def _joined(human: MatrixReader, room_id: str, bot: str) -> bool:
    answer = await human.client.joined_members(room_id)
    return isinstance(answer, JoinedMembersResponse) and bot in {m.user_id for m in answer.members}


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def bench(args: argparse.Namespace, work: Path, *, floor: bool) -> Figures:
    async with running_synapse(work / "synapse") as synapse:
        bot = await synapse.register("clawbot", "clawbot-password")
        human_user = await synapse.register("human", "human-password")
        third = await synapse.register("observer", "observer-password")
        raw = {
            "agents": {"echoDelayMs": args.echo_delay_ms},
            "channels": {
                "matrix": {
                    "homeserver": synapse.url,
                    "userId": bot.user_id,
                    "password": bot.password,
                    "syncTimeoutMs": 5_000,
                }
            },
        }
        state = work / "state"
        settings = Settings(state_dir=state, raw=raw)
        bot_side = (
            _echo_bot(synapse.url, bot.user_id, bot.password)
            if floor
            else running_gateway(state, settings=settings, gateway_settings=GatewaySettings(port=0))
        )
        async with (
            bot_side as gateway,
            matrix_reader(synapse.url, human_user) as human,
            matrix_reader(synapse.url, third) as observer,
        ):
            # three members per room: a group room (one session per room, served side by side);
            # a room of two would be the human's one direct session, answered in turn
            rooms = [
                await human.create_room(invite=(bot.user_id, third.user_id))
                for _ in range(args.rooms)
            ]
            for room_id in rooms:
                await observer.join(room_id)
            for room_id in rooms:

                async def joined(room_id: str = room_id) -> bool:
                    return await _joined(human, room_id, bot.user_id)

                await eventually(joined, timeout=60, what="the bot joined")
            sent: dict[str, int] = {}
            started = time.monotonic()
            # each round: one message into every room at once (the rooms are independent
            # conversations, as many users writing at the same time would be)
            for n in range(args.per_room):
                bodies = [f"r{index}-m{n}" for index in range(len(rooms))]
                await asyncio.gather(
                    *(
                        human.send_text(room_id, f"reply: {body}")
                        for room_id, body in zip(rooms, bodies, strict=True)
                    )
                )
                sent.update(dict.fromkeys(bodies, 0))
            total = len(sent)
            answers: dict[str, list[float]] = {}
            asked_at: dict[str, int] = {}
            deadline = time.monotonic() + args.timeout
            while len(answers) < total and time.monotonic() < deadline:
                await human.sync_once(1_000)
                for message in human.received:
                    if message.sender == human.user_id and message.body.startswith("reply: "):
                        asked_at[message.body.removeprefix("reply: ")] = message.origin_server_ts
                for message in human.received:
                    if message.sender == bot.user_id and message.body in sent:
                        stamps = answers.setdefault(message.body, [])
                        if message.origin_server_ts not in stamps:
                            stamps.append(message.origin_server_ts)
                human.received.clear()
            elapsed = time.monotonic() - started
            delivered = total  # the echo bot stores nothing: what it sent was delivered
            if gateway is not None:
                rows = gateway.runtime.store.outbox.page(None, None, total + 10)
                delivered = sum(1 for row in rows if row.status == "delivered")
            latencies = [
                (stamps[0] - asked_at[body]) / 1000
                for body, stamps in answers.items()
                if body in asked_at
            ]
            twice = sum(1 for stamps in answers.values() if len(stamps) > 1)
    answered = len(answers)
    figures = Figures(
        total=total,
        answered=answered,
        twice=twice,
        delivered=delivered,
        median_s=statistics.median(latencies) if latencies else float("nan"),
        p99_s=_percentile(latencies, 0.99) if latencies else float("nan"),
        rate=answered / elapsed if elapsed else 0.0,
        elapsed_s=elapsed,
    )
    figures.show("a bare echo bot (the floor)" if floor else "the gateway", args)
    return figures


@dataclass(frozen=True, slots=True)
class Figures:
    total: int
    answered: int
    twice: int
    delivered: int
    median_s: float
    p99_s: float
    rate: float
    elapsed_s: float

    @property
    def complete(self) -> bool:
        return self.answered == self.total == self.delivered and self.twice == 0

    def show(self, who: str, args: argparse.Namespace) -> None:
        print(f"answering              {who}")
        print(f"rooms                  {args.rooms} x {args.per_room} messages = {self.total}")
        print(f"answered               {self.answered} / {self.total} (twice: {self.twice})")
        print(f"delivered              {self.delivered} / {self.total}")
        print(f"latency median         {self.median_s * 1000:.0f} ms")
        print(f"latency p99            {self.p99_s * 1000:.0f} ms")
        print(f"throughput             {self.rate:.1f} messages/s")
        print(f"elapsed                {self.elapsed_s:.1f} s")
        print()


def judge(floor: Figures, gateway: Figures) -> bool:
    rate_ok = gateway.rate >= TARGET_RATE_OF_FLOOR * floor.rate
    p99_ok = gateway.p99_s <= TARGET_P99_OF_FLOOR * floor.p99_s
    print(
        f"throughput vs floor    {gateway.rate / floor.rate:.0%}"
        f" (target >= {TARGET_RATE_OF_FLOOR:.0%})"
    )
    share = gateway.p99_s / floor.p99_s
    print(f"p99 vs floor           {share:.0%} (target <= {TARGET_P99_OF_FLOOR:.0%})")
    ok = floor.complete and gateway.complete and rate_ok and p99_ok
    print(f"result                 {'ok' if ok else 'TARGET MISSED'}")
    return ok


@contextlib.asynccontextmanager
async def _echo_bot(homeserver: str, user_id: str, password: str) -> AsyncIterator[None]:
    """The floor: a matrix-nio client that joins its invites and answers each ``reply: <x>``
    with ``<x>``, nothing stored, nothing queued."""
    client = AsyncClient(homeserver, user_id)
    await client.login(password)
    first = await client.sync(timeout=0)
    assert isinstance(first, SyncResponse), first

    async def serve() -> None:
        while True:
            answer = await client.sync(timeout=5_000)
            if not isinstance(answer, SyncResponse):
                continue
            for room_id in answer.rooms.invite:
                await client.join(room_id)
            sends = []
            for room_id, room in answer.rooms.join.items():
                for event in room.timeline.events:
                    body = event.source.get("content", {}).get("body", "")
                    if event.sender != user_id and body.startswith("reply: "):
                        content = {"msgtype": "m.text", "body": body.removeprefix("reply: ")}
                        sends.append(client.room_send(room_id, "m.room.message", content))
            await asyncio.gather(*sends)  # every answer of the sync at once, as the gateway does

    task = asyncio.create_task(serve())
    try:
        yield None
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await client.close()  # type: ignore[no-untyped-call]  # nio leaves it unannotated


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rooms", type=int, default=100)
    parser.add_argument("--per-room", type=int, default=10)
    parser.add_argument("--echo-delay-ms", type=int, default=0)
    parser.add_argument("--floor", action="store_true", help="only the bare echo bot")
    parser.add_argument("--gateway-only", action="store_true", help="only the gateway")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for answers")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="clawline-bench-channels-") as work:
        if args.floor:
            return 0 if asyncio.run(bench(args, Path(work) / "floor", floor=True)).complete else 1
        if args.gateway_only:
            return (
                0 if asyncio.run(bench(args, Path(work) / "gateway", floor=False)).complete else 1
            )
        floor = asyncio.run(bench(args, Path(work) / "floor", floor=True))
        gateway = asyncio.run(bench(args, Path(work) / "gateway", floor=False))
    return 0 if judge(floor, gateway) else 1


if __name__ == "__main__":
    sys.exit(main())
