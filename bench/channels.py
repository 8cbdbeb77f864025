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
once, every outbox row ``delivered``. Target: p99 <= 2 s and >= 50 messages/s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from nio import JoinedMembersResponse

from clawline.config import Settings
from clawline.gateway.options import GatewaySettings
from clawline.testing import eventually
from clawline.testing.live_gateway import running_gateway
from clawline.testing.matrix_reader import MatrixReader, matrix_reader
from clawline.testing.synapse import running_synapse

TARGET_P99_S = 2.0
TARGET_RATE = 50.0


async def _joined(human: MatrixReader, room_id: str, bot: str) -> bool:
    answer = await human.client.joined_members(room_id)
    return isinstance(answer, JoinedMembersResponse) and bot in {m.user_id for m in answer.members}


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def bench(args: argparse.Namespace, work: Path) -> bool:
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
        async with (
            running_gateway(
                state, settings=settings, gateway_settings=GatewaySettings(port=0)
            ) as gateway,
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
            runtime = gateway.runtime
            rows = runtime.store.outbox.page(None, None, total + 10)
            latencies = [
                (stamps[0] - asked_at[body]) / 1000
                for body, stamps in answers.items()
                if body in asked_at
            ]
            twice = sum(1 for stamps in answers.values() if len(stamps) > 1)
    answered = len(answers)
    rate = answered / elapsed if elapsed else 0.0
    median = statistics.median(latencies) if latencies else float("nan")
    p99 = _percentile(latencies, 0.99) if latencies else float("nan")
    delivered = sum(1 for row in rows if row.status == "delivered")
    print(f"rooms                  {args.rooms} x {args.per_room} messages = {total}")
    print(f"answered               {answered} / {total} (twice: {twice})")
    print(f"outbox rows delivered  {delivered} / {len(rows)}")
    print(f"latency median         {median * 1000:.0f} ms")
    print(f"latency p99            {p99 * 1000:.0f} ms (target <= {TARGET_P99_S * 1000:.0f} ms)")
    print(f"throughput             {rate:.1f} messages/s (target >= {TARGET_RATE:.0f})")
    print(f"elapsed                {elapsed:.1f} s")
    ok = (
        answered == total
        and twice == 0
        and delivered == total
        and p99 <= TARGET_P99_S
        and rate >= TARGET_RATE
    )
    print(f"result                 {'ok' if ok else 'TARGET MISSED'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rooms", type=int, default=100)
    parser.add_argument("--per-room", type=int, default=10)
    parser.add_argument("--echo-delay-ms", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for answers")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="clawline-bench-channels-") as work:
        ok = asyncio.run(bench(args, Path(work)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
