"""Gateway benchmark: start-up, idle memory, ``sessions.list`` at 10,000 sessions, and the
``sessions.changed`` fan-out to 1,000 subscribed WebSocket connections.

Run from the repository root::

    .venv/bin/python bench/gateway.py [--sessions 10000] [--subscribers 1000] [--profile]
        [--store-url postgresql://127.0.0.1:5432/test]

The gateway runs as a subprocess (``python -m clawline gateway run --port 0``), so the clients
measured here never share its event loop. See bench/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import itertools
import os
import pstats
import random
import resource
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson
import websockets
from websockets.asyncio.client import ClientConnection

from clawline.config import Settings
from clawline.sessions.catalog import SessionCatalog
from clawline.store import Store, open_store
from clawline.store.base import StoreTransaction
from clawline.testing import FakeClock

TOKEN = "bench-" + uuid.uuid4().hex
AGENTS = ("main", "ops", "research", "support", "codex")
TARGETS = {
    "ready_s": 1.0,
    "idle_rss_mb": 100.0,
    "list100_median_ms": 2.0,
    "list_all_median_ms": 60.0,
    "fanout_p99_ms": 100.0,
}

Row = tuple[str, str, str]
"""(figure, value, verdict) for the report table."""


def verdict(value: float, target: float, unit: str) -> str:
    return f"PASS (≤ {target:g} {unit})" if value <= target else f"MISS (> {target:g} {unit})"


def quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# --- the data set ----------------------------------------------------------------------------


class BatchingStore:
    """Every catalog transaction inside :meth:`batch` joins one store transaction: all catalog
    rules apply, one commit per batch."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._open: StoreTransaction | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    @contextmanager
    def transaction(self) -> Iterator[StoreTransaction]:
        if self._open is not None:
            yield self._open
            return
        with self._store.transaction() as tx:
            yield tx

    @contextmanager
    def batch(self) -> Iterator[None]:
        with self._store.transaction() as tx:
            self._open = tx
            try:
                yield
            finally:
                self._open = None


def session_specs(count: int, seed: int = 3) -> list[tuple[str, dict[str, object]]]:
    """``count`` sessions across five agents: DMs, groups, dashboard chats and (one in five)
    sub-agents of earlier sessions; labels on one in ten, display names on one in five."""
    rng = random.Random(seed)
    specs: list[tuple[str, dict[str, object]]] = []
    roots: list[str] = []
    for agent in AGENTS:
        specs.append((f"agent:{agent}:main", {"model": "gpt-5"}))
        roots.append(f"agent:{agent}:main")
    while len(specs) < count:
        n = len(specs)
        agent = rng.choices(AGENTS, weights=(8, 4, 3, 2, 1))[0]
        changes: dict[str, object]
        if rng.random() < 0.2:
            parent = rng.choice(roots[-200:])
            key = f"agent:{parent.split(':')[1]}:subagent:{uuid.UUID(int=rng.getrandbits(128))}"
            changes = {
                "spawnedBy": parent,
                "spawnDepth": 1,
                "subagentRole": "leaf",
                "spawnedWorkspaceDir": "/srv/work",
                "model": "gpt-5-mini",
            }
        else:
            kind = rng.random()
            if kind < 0.4:
                key = f"agent:{agent}:telegram:direct:u{n}"
                changes = {"channel": "telegram", "chatType": "direct"}
            elif kind < 0.7:
                key = f"agent:{agent}:discord:group:g{n}"
                changes = {"channel": "discord", "chatType": "group", "subject": f"Group {n}"}
            else:
                key = f"agent:{agent}:dashboard:{uuid.UUID(int=rng.getrandbits(128))}"
                changes = {"createdVia": "dashboard"}
            changes["model"] = rng.choice(("gpt-5", "claude-sonnet", "qwen3"))
            roots.append(key)
        if rng.random() < 0.1:
            changes["label"] = f"task {n}"
        if rng.random() < 0.2:
            changes["displayName"] = f"Session {n}"
        specs.append((key, changes))
    return specs


def populate(state_dir: Path, count: int, store_url: str | None = None) -> float:
    """Create ``count`` sessions in the state directory's SQLite store (or ``store_url``'s);
    return seconds."""
    settings = Settings(state_dir=state_dir, store_url=store_url)
    state_dir.mkdir(parents=True, exist_ok=True)
    store = open_store(
        settings.store_url, default_sqlite_path=settings.sqlite_path, pool=settings.store_pool
    )
    started = time.perf_counter()
    try:
        clock = FakeClock(1_780_000_000_000)
        batching = BatchingStore(store)
        catalog = SessionCatalog(cast(Store, batching), clock=clock)
        specs = session_specs(count)
        for start in range(0, len(specs), 1000):
            with batching.batch():
                for key, changes in specs[start : start + 1000]:
                    clock.advance(random.randint(1, 2000))
                    catalog.patch(key, changes)
    finally:
        store.close()
    return time.perf_counter() - started


@contextmanager
def postgres_schema(url: str | None) -> Iterator[str | None]:
    """A URL of a new schema of the PostgreSQL database ``url``, dropped afterwards (``None``
    without one: the state directory's SQLite store)."""
    if url is None:
        yield None
        return
    import psycopg
    from psycopg import sql

    schema = f"clawline_bench_gw_{uuid.uuid4().hex[:12]}"
    try:
        yield f"{url}{'&' if '?' in url else '?'}schema={schema}"
    finally:
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


# --- the gateway process ---------------------------------------------------------------------


def raise_fd_limit(wanted: int) -> int:
    """Raise this process's (and so its children's) open-file soft limit towards ``wanted``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def cli_available() -> bool:
    try:
        import clawline.cli.gateway  # noqa: F401
    except ImportError:
        return False
    return True


def http_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return 0


@dataclass
class GatewayProcess:
    state_dir: Path
    profile_to: Path | None = None
    store_url: str | None = None
    process: subprocess.Popen[bytes] | None = None
    url: str = ""
    ready_s: float = 0.0
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.state_dir.parent / f"{self.state_dir.name}-gateway.log"

    def start(self) -> float:
        """Spawn the gateway; return seconds from spawn until ``/readyz`` answers 200."""
        command = [sys.executable]
        if self.profile_to is not None:
            command += ["-m", "cProfile", "-o", str(self.profile_to)]
        command += ["-m", "clawline", "--state-dir", str(self.state_dir), "gateway", "run"]
        command += ["--port", "0", "--auth", "token", "--log-level", "warning"]
        env = {**os.environ, "CLAWLINE_GATEWAY_TOKEN": TOKEN}
        if self.store_url is not None:
            env["CLAWLINE_STORE_URL"] = self.store_url
        started = time.perf_counter()
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, env=env)
        assert self.process.stdout is not None
        deadline = started + 60
        line = b""
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([self.process.stdout], [], [], 0.5)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 4096)
                if not chunk:
                    break
                line += chunk
            if time.perf_counter() > deadline or self.process.poll() is not None:
                break
        if b"listening on " not in line:
            self.stop()
            raise RuntimeError(f"the gateway did not start: {line!r}\n{self.log.read_text()}")
        # the ready line may come with the web chat line in the same chunk
        self.url = line.decode().splitlines()[0].rsplit(" ", 1)[-1]
        http = "http" + self.url[2:]
        while http_status(http + "/readyz") != 200:
            if time.perf_counter() > deadline:
                raise RuntimeError("the gateway never became ready")
            time.sleep(0.002)
        self.ready_s = time.perf_counter() - started
        return self.ready_s

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def rss_mb(self) -> float:
        assert self.process is not None
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextmanager
def gateway_process(
    state_dir: Path, profile_to: Path | None = None, store_url: str | None = None
) -> Iterator[GatewayProcess]:
    process = GatewayProcess(state_dir, profile_to, store_url)
    try:
        process.start()
        yield process
    finally:
        process.stop()


async def in_process_start_s(state_dir: Path) -> float:
    from clawline.gateway.options import GatewaySettings
    from clawline.testing.live_gateway import running_gateway

    started = time.perf_counter()
    settings = GatewaySettings(port=0, auth="token", token=TOKEN)
    async with running_gateway(state_dir, gateway_settings=settings):
        return time.perf_counter() - started


# --- one protocol client (websockets) --------------------------------------------------------


class Client:
    """One connection; requests one at a time, timed from send to the raw response frame."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._ids = itertools.count(1)

    @classmethod
    async def connect(cls, url: str) -> Client:
        ws = await websockets.connect(url + "/ws", max_size=None, compression=None)
        client = cls(ws)
        await ws.recv()  # connect.challenge
        hello = await client.call("connect", connect_params())
        if not hello.get("ok"):
            raise RuntimeError(f"connect refused: {hello}")
        return client

    async def timed(self, method: str, params: dict[str, Any]) -> tuple[float, str]:
        request_id = f"b{next(self._ids)}"
        prefix = '{"type":"res","id":"' + request_id + '"'
        frame = orjson.dumps({"type": "req", "id": request_id, "method": method, "params": params})
        started = time.perf_counter()
        await self.ws.send(frame.decode())
        while True:
            raw = await self.ws.recv()
            if isinstance(raw, str) and raw.startswith(prefix):
                return time.perf_counter() - started, raw

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        _, raw = await self.timed(method, params)
        answer: dict[str, Any] = orjson.loads(raw)
        return answer

    async def close(self) -> None:
        await self.ws.close()


def connect_params() -> dict[str, Any]:
    return {
        "minProtocol": 3,
        "maxProtocol": 4,
        "client": {"id": "cli", "version": "bench", "platform": "linux", "mode": "cli"},
        "role": "operator",
        "scopes": ["operator.admin"],
        "caps": [],
        "auth": {"token": TOKEN},
    }


# --- many light subscribers (raw protocol, one asyncio.Protocol each) ------------------------


class Subscriber(asyncio.Protocol):
    """A lean WebSocket client: it parses frames as they arrive, answers pings, and stamps
    each ``sessions.changed`` frame with its arrival time (parsing the JSON happens later)."""

    CHANGED = b'{"type":"event","event":"sessions.changed"'

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.upgraded = asyncio.get_running_loop().create_future()
        self.responses: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.changed: list[tuple[float, bytes]] = []
        self.challenge = asyncio.get_running_loop().create_future()
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True

    def data_received(self, data: bytes) -> None:
        arrived = time.time()
        self.buffer += data
        if not self.upgraded.done():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end])
            del self.buffer[: end + 4]
            self.upgraded.set_result(head.startswith(b"HTTP/1.1 101"))
        while len(self.buffer) >= 2:
            size = self.buffer[1] & 0x7F
            offset = 2
            if size == 126:
                if len(self.buffer) < 4:
                    return
                size, offset = int.from_bytes(self.buffer[2:4], "big"), 4
            elif size == 127:
                if len(self.buffer) < 10:
                    return
                size, offset = int.from_bytes(self.buffer[2:10], "big"), 10
            if len(self.buffer) < offset + size:
                return
            opcode = self.buffer[0] & 0x0F
            payload = bytes(self.buffer[offset : offset + size])
            del self.buffer[: offset + size]
            self.on_frame(opcode, payload, arrived)

    def on_frame(self, opcode: int, payload: bytes, arrived: float) -> None:
        if opcode == 0x9:
            self.send(payload, opcode=0xA)
        elif opcode == 0x8:
            self.closed = True
        elif payload.startswith(self.CHANGED):
            self.changed.append((arrived, payload))
        elif opcode == 0x1:
            frame = orjson.loads(payload)
            if frame.get("type") == "res":
                future = self.responses.pop(frame.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(frame)
            elif frame.get("event") == "connect.challenge" and not self.challenge.done():
                self.challenge.set_result(frame)

    def send(self, payload: bytes, opcode: int = 0x1) -> None:
        assert self.transport is not None
        size = len(payload)
        if size < 126:
            head = bytes([0x80 | opcode, 0x80 | size])
        elif size < 65536:
            head = bytes([0x80 | opcode, 0x80 | 126]) + size.to_bytes(2, "big")
        else:
            head = bytes([0x80 | opcode, 0x80 | 127]) + size.to_bytes(8, "big")
        self.transport.write(head + b"\0\0\0\0" + payload)  # a zero mask leaves data as is

    async def request(self, request_id: str, method: str, params: dict[str, Any]) -> Any:
        future = asyncio.get_running_loop().create_future()
        self.responses[request_id] = future
        frame = {"type": "req", "id": request_id, "method": method, "params": params}
        self.send(orjson.dumps(frame))
        answer = await asyncio.wait_for(future, 30)
        if not answer.get("ok"):
            raise RuntimeError(f"{method} refused: {answer}")
        return answer.get("payload")

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


async def subscribe(port: int) -> Subscriber:
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(Subscriber, "127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    assert protocol.transport is not None
    protocol.transport.write(
        (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    if not await asyncio.wait_for(protocol.upgraded, 30):
        raise RuntimeError("upgrade refused")
    await asyncio.wait_for(protocol.challenge, 30)
    await protocol.request("c", "connect", connect_params())
    await protocol.request("s", "sessions.subscribe", {})
    return protocol


# --- the measurements ------------------------------------------------------------------------


async def measure_lists(url: str, calls: int, all_calls: int) -> dict[str, Any]:
    client = await Client.connect(url)
    try:
        probe = await client.call("sessions.list", {"limit": 100})
        if not probe.get("ok"):
            return {"error": probe.get("error")}
        for _ in range(10):  # warm-up
            await client.timed("sessions.list", {"limit": 100})
            await client.timed("health", {})
        floor = [(await client.timed("health", {}))[0] for _ in range(calls)]
        page = [(await client.timed("sessions.list", {"limit": 100}))[0] for _ in range(calls)]
        first_all, raw_all = await client.timed("sessions.list", {"limit": 10_000})
        everything = [
            (await client.timed("sessions.list", {"limit": 10_000}))[0] for _ in range(all_calls)
        ]
        body = orjson.loads(raw_all)["payload"]
        return {
            "health_ms": [s * 1000 for s in floor],
            "page_ms": [s * 1000 for s in page],
            "all_ms": [s * 1000 for s in everything],
            "all_first_ms": first_all * 1000,
            "all_rows": body["count"],
            "all_total": body["totalCount"],
            "all_mb": len(raw_all) / 1e6,
            "page_kb": len((await client.timed("sessions.list", {"limit": 100}))[1]) / 1e3,
        }
    finally:
        await client.close()


async def measure_fanout(port: int, url: str, subscribers: int, changes: int) -> dict[str, Any]:
    connected: list[Subscriber] = []
    started = time.perf_counter()
    for start in range(0, subscribers, 100):
        batch = min(100, subscribers - start)
        connected += await asyncio.gather(*(subscribe(port) for _ in range(batch)))
    connect_s = time.perf_counter() - started
    writer = await Client.connect(url)
    keys = [f"agent:main:dashboard:bench-fanout-{n}" for n in range(changes)]
    sent_at: dict[str, float] = {}
    try:
        for n, key in enumerate(keys):
            sent_at[key] = time.time()
            answer = await writer.call("sessions.patch", {"key": key, "label": f"fan-out {n}"})
            if not answer.get("ok"):
                raise RuntimeError(f"sessions.patch refused: {answer}")
            deadline = time.perf_counter() + 10
            while any(len(s.changed) <= n for s in connected if not s.closed):
                if time.perf_counter() > deadline:
                    break
                await asyncio.sleep(0.005)
            await asyncio.sleep(0.05)  # let the loop settle between fan-outs
    finally:
        await writer.close()
    from_publish: list[float] = []
    from_request: list[float] = []
    received = 0
    for subscriber in connected:
        for arrived, payload in subscriber.changed:
            event = orjson.loads(payload)["payload"]
            if event.get("sessionKey") not in sent_at:
                continue
            received += 1
            from_publish.append(arrived * 1000 - event["ts"])
            from_request.append((arrived - sent_at[event["sessionKey"]]) * 1000)
        subscriber.close()
    return {
        "connect_s": connect_s,
        "expected": subscribers * changes,
        "received": received,
        "closed": sum(1 for s in connected if s.closed),
        "from_publish": from_publish,
        "from_request": from_request,
    }


def print_profile(path: Path, limit: int = 25) -> None:
    if not path.exists():
        print(f"(no profile at {path})")
        return
    stats = pstats.Stats(str(path))
    stats.sort_stats("tottime").print_stats(limit)


def print_table(rows: list[Row]) -> None:
    width = max(len(row[0]) for row in rows)
    value_width = max(len(row[1]) for row in rows)
    for figure, value, judged in rows:
        print(f"  {figure:<{width}}  {value:>{value_width}}  {judged}")


def listing_and_fanout(
    args: argparse.Namespace, state: Path, store_url: str | None, rows: list[Row]
) -> None:
    """(b) and (c): a gateway over a store of ``args.sessions`` sessions."""
    load_s = populate(state, args.sessions, store_url)
    store = "SQLite" if store_url is None else "PostgreSQL"
    print(f"created {args.sessions:,} sessions ({store}) in {load_s:.1f} s")
    profile = state.parent / "gateway.prof" if args.profile else None
    with gateway_process(state, profile, store_url) as process:
        rows.append(
            (
                f"start → ready with {args.sessions:,} sessions",
                f"{process.ready_s * 1000:.0f} ms",
                "",
            )
        )
        time.sleep(0.5)
        rows.append((f"idle RSS with {args.sessions:,} sessions", f"{process.rss_mb():.1f} MB", ""))
        lists = asyncio.run(measure_lists(process.url, args.list_calls, args.all_calls))
        if "error" in lists:
            rows.append(("sessions.list", "n/a", f"refused: {lists['error']}"))
        else:
            median = statistics.median(lists["page_ms"])
            rows.append(
                (
                    f"sessions.list limit 100, median of {args.list_calls}",
                    f"{median:.2f} ms",
                    verdict(median, TARGETS["list100_median_ms"], "ms"),
                )
            )
            rows.append(
                (
                    "sessions.list limit 100, p95",
                    f"{quantile(lists['page_ms'], 0.95):.2f} ms",
                    "",
                )
            )
            floor = statistics.median(lists["health_ms"])
            rows.append(("  health round trip, median (protocol floor)", f"{floor:.2f} ms", ""))
            every = statistics.median(lists["all_ms"])
            rows.append(
                (
                    f"sessions.list all {lists['all_rows']:,} rows, median of {args.all_calls}",
                    f"{every:.1f} ms",
                    verdict(every, TARGETS["list_all_median_ms"], "ms"),
                )
            )
            rows.append(("  first all-rows call", f"{lists['all_first_ms']:.1f} ms", ""))
            rows.append(
                (
                    "  response sizes (100 / all)",
                    f"{lists['page_kb']:.0f} kB / {lists['all_mb']:.1f} MB",
                    "",
                )
            )

        # (c) fan-out of sessions.changed
        fan = asyncio.run(measure_fanout(process.port, process.url, args.subscribers, args.changes))
        rows.append(
            (
                f"connect + subscribe {args.subscribers:,} clients",
                f"{fan['connect_s']:.1f} s",
                "",
            )
        )
        rows.append(
            (
                "sessions.changed delivered",
                f"{fan['received']:,} / {fan['expected']:,}",
                "PASS" if fan["received"] == fan["expected"] else "MISS (lost events)",
            )
        )
        if fan["from_publish"]:
            samples = fan["from_publish"]
            p99 = quantile(samples, 0.99)
            rows.append(
                (
                    "fan-out publish → receive p50 / p99 / max",
                    f"{quantile(samples, 0.5):.1f} / {p99:.1f} / {max(samples):.1f} ms",
                    verdict(p99, TARGETS["fanout_p99_ms"], "ms"),
                )
            )
            request = fan["from_request"]
            rows.append(
                (
                    "  patch sent → receive p50 / p99 / max",
                    f"{quantile(request, 0.5):.1f} / {quantile(request, 0.99):.1f} / "
                    f"{max(request):.1f} ms",
                    "",
                )
            )
        rows.append(("  subscribers disconnected", str(fan["closed"]), ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--subscribers", type=int, default=1_000)
    parser.add_argument("--changes", type=int, default=30, help="sessions.patch calls to fan out")
    parser.add_argument("--list-calls", type=int, default=300)
    parser.add_argument("--all-calls", type=int, default=12)
    parser.add_argument("--starts", type=int, default=5, help="start-up runs (median)")
    parser.add_argument("--profile", action="store_true", help="cProfile the gateway (b, c)")
    parser.add_argument(
        "--store-url",
        metavar="URL",
        help="a PostgreSQL URL: (b) and (c) use a throwaway schema of it (dropped afterwards)",
    )
    args = parser.parse_args()
    fd_limit = raise_fd_limit(2 * args.subscribers + 512)
    rows: list[Row] = []
    workdir = Path(tempfile.mkdtemp(prefix="clawline-bench-gw-"))
    try:
        load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
        print(f"cpus: {os.cpu_count()}; load average: {load}; open-file soft limit: {fd_limit}")
        in_process = asyncio.run(in_process_start_s(workdir / "in-process"))
        rows.append(("in-process start (app only)", f"{in_process * 1000:.0f} ms", ""))
        if not cli_available():
            print("`clawline gateway run` is not available yet: subprocess figures skipped")
            print_table(rows)
            return 1

        # (a) start-up and idle memory, empty state
        starts, rss = [], []
        for run in range(args.starts):
            with gateway_process(workdir / f"empty-{run}") as process:
                starts.append(process.ready_s)
                time.sleep(1.0)
                rss.append(process.rss_mb())
        ready = statistics.median(starts)
        rows.append(
            (
                "start → /readyz 200 (median)",
                f"{ready * 1000:.0f} ms",
                verdict(ready, TARGETS["ready_s"], "s"),
            )
        )
        idle = statistics.median(rss)
        rows.append(
            ("idle RSS after ready", f"{idle:.1f} MB", verdict(idle, TARGETS["idle_rss_mb"], "MB"))
        )

        # (b) sessions.list over a store of N sessions
        state = workdir / "big"
        with postgres_schema(args.store_url) as store_url:
            listing_and_fanout(args, state, store_url, rows)
        print()
        print_table(rows)
        load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
        print(f"load average at the end: {load}")
        profile = workdir / "gateway.prof"
        if args.profile:
            print()
            print_profile(profile)
        return 0
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(workdir)


if __name__ == "__main__":
    sys.exit(main())
