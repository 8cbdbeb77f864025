"""ACP bridge benchmark: walk the whole ``session/list`` of ``clawline acp`` over stdio.

Run from the repository root::

    .venv/bin/python bench/acp_list.py                         # 10,000 and 100,000 sessions
    .venv/bin/python bench/acp_list.py --sizes 100000 --reuse /tmp/bench-acp   # keep / reuse builds
    .venv/bin/python bench/acp_list.py --sizes 10000 --profile                 # cProfile both sides
    .venv/bin/python bench/acp_list.py --store-url postgresql://postgres@127.0.0.1:5432/test

Each size gets a state directory whose SQLite store holds ``bench/store.py``'s data set (built
through ``SessionCatalog.patch``, batched). ``python -m clawline --state-dir <dir> acp`` runs as
a subprocess (it starts the state directory's gateway in its own process), and the SDK client
(``acp.spawn_agent_process``, ``ClientSideConnection.list_sessions``: pydantic-parsed pages)
walks every page. With ``--store-url`` (PostgreSQL) the data set goes to a throwaway schema
of that database instead (``?schema=``, dropped afterwards), and the bridge gets the URL as
``CLAWLINE_STORE_URL``. See bench/README.md for the figures and targets.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

# Run as ``python bench/acp_list.py``: the repository root must be importable for ``bench.store``.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import acp
from bench.store import build_plan, load

from clawline.config import Settings
from clawline.store import open_store
from clawline.store.base import SessionQuery

TARGETS_S = {10_000: 0.15, 100_000: 1.5}
MAX_RATIO = 1.2
"""First and last page (each asked for alone) within 20 % of each other."""
EDGE_PAGES = 5
ALONE_PAGES = 9
READ_AHEAD_SETTLE_S = 0.05
FILTER_CWD = "/srv/work/main"
"""The ``spawnedWorkspaceDir`` of the data set's sub-agents of agent ``main``."""


class QuietClient:
    """The bench's ACP client: it expects no updates and grants nothing."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")


@dataclass
class Walk:
    seconds: float
    page_ms: list[float]
    keys: list[str]
    last_cursor: str | None = None
    """The cursor that asked for the walk's last page."""


@dataclass
class Result:
    size: int
    listed: int = 0
    walks: list[Walk] = field(default_factory=list)
    start_s: float = 0.0
    build_s: float | None = None
    filtered: Walk | None = None
    first_alone_ms: list[float] = field(default_factory=list)
    last_alone_ms: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --- the data set ----------------------------------------------------------------------------


def _built(state: Path, size: int) -> bool:
    marker = state / "bench-built"
    return marker.exists() and marker.read_text().strip() == str(size)


def with_schema(url: str, schema: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}schema={schema}"


@contextlib.contextmanager
def postgres_state(size: int, url: str) -> Iterator[tuple[Path, float | None]]:
    """A state directory whose store is a new schema of ``url`` holding ``size`` sessions
    (``CLAWLINE_STORE_URL`` is set to it for the bridge); the schema is dropped afterwards."""
    import psycopg
    from psycopg import sql

    schema = f"clawline_bench_acp_{uuid.uuid4().hex[:12]}"
    state = Path(tempfile.mkdtemp(prefix="clawline-bench-acp-")) / "state"
    state.mkdir(parents=True)
    os.environ["CLAWLINE_STORE_URL"] = with_schema(url, schema)
    try:
        store = open_store(os.environ["CLAWLINE_STORE_URL"])
        started = time.perf_counter()
        try:
            load(store, build_plan(size), per_row=0, batch=1000)
        finally:
            store.close()
        yield state, time.perf_counter() - started
    finally:
        del os.environ["CLAWLINE_STORE_URL"]
        shutil.rmtree(state.parent, ignore_errors=True)
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@contextlib.contextmanager
def state_dir(
    size: int, reuse: Path | None, store_url: str | None = None
) -> Iterator[tuple[Path, float | None]]:
    """A state directory holding ``size`` sessions; the seconds its build took (``None``:
    reused)."""
    if store_url is not None:
        with postgres_state(size, store_url) as built:
            yield built
        return
    if reuse is not None:
        state = reuse / str(size)
        if _built(state, size):
            yield state, None
            return
        if state.exists():
            raise SystemExit(f"{state} holds no finished {size:,}-session build; delete it first")
        cleanup = False
    else:
        state = Path(tempfile.mkdtemp(prefix="clawline-bench-acp-")) / "state"
        cleanup = True
    try:
        state.mkdir(parents=True)
        settings = Settings(state_dir=state)
        store = open_store(
            settings.store_url, default_sqlite_path=settings.sqlite_path, pool=settings.store_pool
        )
        started = time.perf_counter()
        try:
            load(store, build_plan(size), per_row=0, batch=1000)
        finally:
            store.close()
        (state / "bench-built").write_text(f"{size}\n")
        yield state, time.perf_counter() - started
    finally:
        if cleanup:
            shutil.rmtree(state.parent, ignore_errors=True)


def listable(state: Path) -> int:
    settings = Settings(state_dir=state, store_url=os.environ.get("CLAWLINE_STORE_URL"))
    store = open_store(
        settings.store_url, default_sqlite_path=settings.sqlite_path, pool=settings.store_pool
    )
    try:
        return store.count(SessionQuery(include_global=False, include_unknown=False))
    finally:
        store.close()


# --- the bridge ------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def bridge(
    state: Path, profile_to: Path | None
) -> AsyncIterator[tuple[acp.ClientSideConnection, float]]:
    """``clawline acp`` on ``state``; the connection and the seconds until ``initialize``
    answered."""
    python = [sys.executable] + (["-m", "cProfile", "-o", str(profile_to)] if profile_to else [])
    args = [*python[1:], "-m", "clawline", "--state-dir", str(state), "acp"]
    started = time.perf_counter()
    async with acp.spawn_agent_process(
        cast(acp.Client, QuietClient()),
        python[0],
        *args,
        env={
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            **{k: v for k, v in os.environ.items() if k == "CLAWLINE_STORE_URL"},
        },
        transport_kwargs={"stderr": None, "limit": 64 * 1024 * 1024},
    ) as (conn, _process):
        await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
        yield conn, time.perf_counter() - started


async def walk(conn: acp.ClientSideConnection, cwd: str | None = None) -> Walk:
    keys: list[str] = []
    page_ms: list[float] = []
    cursor: str | None = None
    started = time.perf_counter()
    while True:
        sent = time.perf_counter()
        page = await conn.list_sessions(cursor=cursor, cwd=cwd)
        page_ms.append((time.perf_counter() - sent) * 1000)
        keys.extend(info.session_id for info in page.sessions)
        if page.next_cursor is None:
            return Walk(time.perf_counter() - started, page_ms, keys, cursor)
        cursor = page.next_cursor


async def alone(
    conn: acp.ClientSideConnection, last_cursor: str | None, result: Result, times: int
) -> None:
    """The first and the last page each asked for on its own (alternately, ``times`` each),
    so that neither finds a page read ahead: what a page costs by where it is in the list.
    Each request waits until the read-ahead the one before it started is done."""
    for _ in range(times):
        for cursor, into in ((None, result.first_alone_ms), (last_cursor, result.last_alone_ms)):
            await asyncio.sleep(READ_AHEAD_SETTLE_S)
            sent = time.perf_counter()
            await conn.list_sessions(cursor=cursor)
            into.append((time.perf_counter() - sent) * 1000)


async def measure(state: Path, result: Result, walks: int, profile: bool) -> None:
    profile_to = state.parent / f"bridge-{result.size}.prof" if profile else None
    async with bridge(state, profile_to) as (conn, start_s):
        result.start_s = start_s
        await conn.list_sessions()  # warm-up: imports, first query plans
        for _ in range(walks):
            result.walks.append(await walk(conn))
        await alone(conn, result.walks[-1].last_cursor, result, ALONE_PAGES)
        result.filtered = await walk(conn, FILTER_CWD)
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
            await walk(conn)
            profiler.disable()
            result.notes.append("client side (this process), one walk:\n" + top(profiler))
    if profile_to is not None and profile_to.exists():
        result.notes.append("bridge process, whole run:\n" + top(pstats.Stats(str(profile_to))))


def top(source: cProfile.Profile | pstats.Stats, limit: int = 22) -> str:
    out = io.StringIO()
    stats = source if isinstance(source, pstats.Stats) else pstats.Stats(source)
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats("tottime").print_stats(limit)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    total: float = stats.total_tt  # type: ignore[attr-defined]
    head = f"{total:.3f} s profiled in all (the percentages are of it)"
    return "\n".join([head, *(_with_share(line, total) for line in lines[start:])])


def _with_share(line: str, total: float) -> str:
    """A pstats row with its tottime's share of ``total`` in front."""
    fields = line.split()
    try:
        tottime = float(fields[1])
    except (IndexError, ValueError):
        return line
    return f"{100 * tottime / total:5.1f} % {line}" if total else line


# --- report ----------------------------------------------------------------------------------


def check(result: Result) -> None:
    for number, done in enumerate(result.walks, start=1):
        if len(done.keys) != result.listed or len(set(done.keys)) != len(done.keys):
            result.notes.append(
                f"WALK MISMATCH (walk {number}): {len(done.keys)} rows, "
                f"{len(set(done.keys))} distinct, {result.listed} listable"
            )


def report(results: list[Result]) -> str:
    lines = []
    for result in results:
        median = sorted(result.walks, key=lambda w: w.seconds)[len(result.walks) // 2]
        first = statistics.median(median.page_ms[:EDGE_PAGES])
        last = statistics.median(median.page_ms[-EDGE_PAGES:])
        first_alone = statistics.median(result.first_alone_ms)
        last_alone = statistics.median(result.last_alone_ms)
        target = TARGETS_S.get(result.size)
        low, high = sorted((first_alone, last_alone))
        ratio = high / low if low else float("inf")
        verdict = "" if target is None else (" PASS" if median.seconds <= target else " MISS")
        build = "reused" if result.build_s is None else f"{result.build_s:.1f} s"
        lines += [
            f"== {result.size:,} sessions ({result.listed:,} listable; build {build}) ==",
            f"bridge start → initialize answered   {result.start_s:8.2f} s",
            f"listing time, median of {len(result.walks)} walks     {median.seconds:8.3f} s"
            + (f"   target ≤ {target} s{verdict}" if target is not None else ""),
            f"  (all walks: {', '.join(f'{w.seconds:.3f}' for w in result.walks)} s)",
            f"pages                                {len(median.page_ms):8d}",
            f"in the walk, first / last {EDGE_PAGES} pages   {first:8.2f} / {last:.2f} ms"
            " (medians; later pages are read ahead)",
            f"first / last page alone, median of {len(result.first_alone_ms)}"
            f"  {first_alone:6.2f} / {last_alone:.2f} ms",
            f"  larger / smaller                   {ratio:8.2f}    target ≤ {MAX_RATIO}"
            + (" PASS" if ratio <= MAX_RATIO else " MISS"),
            f"page latency p50 / p95 / max         {statistics.median(median.page_ms):8.2f} / "
            f"{statistics.quantiles(median.page_ms, n=20)[-1]:.2f} / {max(median.page_ms):.2f} ms",
            *filtered_lines(result),
            *result.notes,
            "",
        ]
    return "\n".join(lines)


def filtered_lines(result: Result) -> list[str]:
    done = result.filtered
    if done is None:
        return []
    return [
        f"walk with cwd={FILTER_CWD}          {done.seconds:8.3f} s   "
        f"({len(done.keys):,} rows, {len(done.page_ms)} pages, "
        f"first / last page {done.page_ms[0]:.2f} / {done.page_ms[-1]:.2f} ms)"
    ]


async def run(size: int, args: argparse.Namespace) -> Result:
    result = Result(size)
    with state_dir(size, args.reuse, args.store_url) as (state, build_s):
        result.build_s = build_s
        result.listed = listable(state)
        print(f"[{size:,}] measuring ...", file=sys.stderr, flush=True)
        await measure(state, result, args.walks, args.profile)
    check(result)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated session counts")
    parser.add_argument("--walks", type=int, default=3, help="full walks per size (default 3)")
    parser.add_argument("--reuse", type=Path, metavar="DIR", help="keep builds in DIR/<size>")
    parser.add_argument("--profile", action="store_true", help="cProfile the bridge and client")
    parser.add_argument(
        "--store-url",
        metavar="URL",
        help="a PostgreSQL URL: build each size in a throwaway schema of it (dropped afterwards)",
    )
    args = parser.parse_args(argv)
    if args.store_url is not None and args.reuse is not None:
        parser.error("--reuse keeps SQLite builds; it cannot be combined with --store-url")
    sizes = [int(part.replace("_", "")) for part in args.sizes.split(",") if part.strip()]
    results = [asyncio.run(run(size, args)) for size in sizes]
    print(report(results))
    return 1 if any("MISMATCH" in note for r in results for note in r.notes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
