"""Store benchmark: build a realistic catalog and time the listing and lineage reads.

Run from the repository root::

    .venv/bin/python bench/store.py [--backend sqlite|postgres|both] [--sizes 10000,100000]

Each build writes through :class:`SessionCatalog` (so every catalog rule is applied):

- the first ``--per-row`` sessions with one ``catalog.patch`` per row, one transaction each;
- the rest with ``catalog.patch`` as well, but ``--batch`` of them share one store transaction
  (:class:`BatchingStore`), which is how a bulk import would load a large catalog.

Both insert rates are reported. See bench/README.md for what the other figures mean.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import math
import pstats
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from clawline.sessions.catalog import SessionCatalog
from clawline.store.base import SessionQuery, Store, StoreTransaction
from clawline.store.cursor import CursorCodec, Position
from clawline.testing import FakeClock

DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/test"
AGENTS = ("main", "ops", "research", "support", "codex")
PAGE = 100
BIG_FANOUT = (10, 10, 9)
"""The large subtree: a root, 10 orchestrators, 10 each below them, 9 leaves each below those:
1 + 10 + 100 + 900 = 1,011 sessions, so 1,010 descendants of the root."""

TARGETS = {  # SQLite at 100,000 sessions, from the issue
    "page_median_ms": 2.0,
    "page_p95_ms": 2.0,
    "walk_s": 2.0,
    "descendants_median_ms": 20.0,
}


# --- the data set ----------------------------------------------------------------------------


@dataclass(slots=True)
class Plan:
    """Sessions to create, in order (a parent always before its children)."""

    specs: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    """Keys that get at least one child."""
    labels: list[tuple[str, str]] = field(default_factory=list)
    """(label, agent id) of every labelled session."""
    big_root: str = ""
    big_size: int = 0
    subagents: int = 0


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _root(rng: random.Random, n: int, agent: str) -> tuple[str, dict[str, object]]:
    """A non-subagent session: a DM, group, thread, dashboard chat, cron job or webhook."""
    kind = rng.random()
    if kind < 0.35:
        channel = rng.choice(("telegram", "whatsapp", "signal"))
        key = f"agent:{agent}:{channel}:direct:u{n}"
        extra: dict[str, object] = {"channel": channel, "chatType": "direct"}
    elif kind < 0.55:
        key = f"agent:{agent}:discord:group:g{n}"
        extra = {"channel": "discord", "chatType": "group", "subject": f"Group {n}"}
    elif kind < 0.65:
        key = f"agent:{agent}:slack:channel:c{n % 97}:thread:{n}.{rng.randint(0, 999999)}"
        extra = {"channel": "slack", "chatType": "channel"}
    elif kind < 0.85:
        key = f"agent:{agent}:dashboard:{_uuid(rng)}"
        extra = {"createdVia": "dashboard"}
    elif kind < 0.95:
        key = f"agent:{agent}:cron:job{n}"
        extra = {"origin": {"provider": "cron"}}
    else:
        key = f"agent:{agent}:hook:{_uuid(rng)}"
        extra = {"origin": {"provider": "webhook"}}
    extra.update(model=rng.choice(("gpt-5", "claude-sonnet", "qwen3")), thinkingLevel="low")
    return key, extra


def _subagent(
    rng: random.Random, agent: str, parent: str, depth: int, orchestrator: bool
) -> tuple[str, dict[str, object]]:
    key = f"agent:{agent}:subagent:{_uuid(rng)}"
    changes: dict[str, object] = {
        "spawnedBy": parent,
        "spawnDepth": depth,
        "subagentRole": "orchestrator" if orchestrator else "leaf",
        "subagentControlScope": "children" if orchestrator else "none",
        "spawnedWorkspaceDir": f"/srv/work/{agent}",
        "status": rng.choice(("running", "done", "done", "failed")),
        "model": "gpt-5-mini",
    }
    return key, changes


def build_plan(size: int, seed: int = 7) -> Plan:
    """``size`` sessions: one in five a sub-agent (depth 1-3), a few agents, labels on about
    one row in ten, and one large subtree of 1,011 sessions in the middle."""
    rng = random.Random(seed)
    plan = Plan()
    big_total = 1 + BIG_FANOUT[0] * (1 + BIG_FANOUT[1] * (1 + BIG_FANOUT[2]))
    share = max(0.0, (size / 5 - (big_total - 1)) / max(1, size - big_total))
    roots: list[tuple[str, str]] = []  # (key, agent)
    orchestrators: list[tuple[str, str, int]] = []  # (key, agent, depth)
    parents: set[str] = set()
    labelled = 0

    def add(key: str, changes: dict[str, object], agent: str) -> None:
        nonlocal labelled
        if rng.random() < 0.1:
            labelled += 1
            label = f"task {labelled}"
            changes["label"] = label
            plan.labels.append((label, agent))
        if rng.random() < 0.2:
            changes["displayName"] = f"Session {len(plan.specs)}"
        plan.specs.append((key, changes))

    def add_big_tree() -> None:
        root = f"agent:main:dashboard:{_uuid(rng)}"
        plan.big_root = root
        add(root, {"label": "big tree", "createdVia": "dashboard"}, "main")
        parents.add(root)
        level = [root]
        for depth, fanout in enumerate(BIG_FANOUT, start=1):
            below = []
            for parent in level:
                parents.add(parent)
                for _ in range(fanout):
                    key, changes = _subagent(rng, "main", parent, depth, depth < 3)
                    add(key, changes, "main")
                    below.append(key)
            level = below
        plan.big_size = big_total
        plan.subagents += big_total - 1

    for agent in AGENTS:
        add(f"agent:{agent}:main", {"model": "gpt-5"}, agent)
        roots.append((f"agent:{agent}:main", agent))
    while len(plan.specs) < size:
        if not plan.big_root and len(plan.specs) >= (size - big_total) // 2:
            add_big_tree()
            continue
        n = len(plan.specs)
        if rng.random() < share:
            if orchestrators and rng.random() < 0.3:
                parent, agent, depth = rng.choice(orchestrators[-300:])
            else:
                parent, agent = rng.choice(roots[-300:])
                depth = 0
            orchestrator = depth < 2 and rng.random() < 0.3
            key, changes = _subagent(rng, agent, parent, depth + 1, orchestrator)
            add(key, changes, agent)
            parents.add(parent)
            plan.subagents += 1
            if orchestrator:
                orchestrators.append((key, agent, depth + 1))
        else:
            agent = rng.choices(AGENTS, weights=(8, 4, 3, 2, 1))[0]
            key, changes = _root(rng, n, agent)
            add(key, changes, agent)
            roots.append((key, agent))
    plan.parents = sorted(parents)
    return plan


# --- loading ---------------------------------------------------------------------------------


class BatchingStore:
    """A store proxy: inside :meth:`batch`, every catalog transaction joins one store
    transaction, so ``catalog.patch`` keeps all its checks but commits once per batch."""

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


def load(store: Store, plan: Plan, per_row: int, batch: int) -> tuple[float, float, int, int]:
    """Create every session of ``plan``; return the two insert rates and their row counts."""
    clock = FakeClock(1_780_000_000_000)
    batching = BatchingStore(store)
    catalog = SessionCatalog(cast(Store, batching), clock=clock)
    gaps = random.Random(11)
    specs = plan.specs
    head, tail = specs[:per_row], specs[per_row:]

    started = time.perf_counter()
    for key, changes in head:
        clock.advance(gaps.randint(1, 2000))
        catalog.patch(key, changes)
    per_row_rate = len(head) / (time.perf_counter() - started) if head else 0.0

    started = time.perf_counter()
    for start in range(0, len(tail), batch):
        with batching.batch():
            for key, changes in tail[start : start + batch]:
                clock.advance(gaps.randint(1, 2000))
                catalog.patch(key, changes)
    bulk_rate = len(tail) / (time.perf_counter() - started) if tail else 0.0
    return per_row_rate, bulk_rate, len(head), len(tail)


# --- measuring -------------------------------------------------------------------------------


def timed_ms(action: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20, method="inclusive")[-1]


@dataclass(slots=True)
class Result:
    backend: str
    size: int
    figures: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    reused: bool = False
    """The store was built by an earlier run (``--reuse``): no insert figures."""


def measure(store: Store, plan: Plan, result: Result, profile: bool) -> None:
    catalog = SessionCatalog(store)
    query = SessionQuery()
    rng = random.Random(3)
    # full keyset walk: pages of 100 through catalog cursors, all rows, each exactly once;
    # the median of three walks
    durations = []
    for _ in range(3):
        started = time.perf_counter()
        seen, pages = walk(catalog, query)
        durations.append(time.perf_counter() - started)
    result.figures["walk_s"] = statistics.median(durations)
    result.figures["walk_pages"] = pages
    unique = len({key for _, key in seen})
    if len(seen) != len(plan.specs) or unique != len(seen):
        result.notes.append(
            f"WALK MISMATCH: {len(seen)} rows walked, {unique} distinct, {len(plan.specs)} stored"
        )
    if seen != sorted(seen, reverse=True):
        result.notes.append("WALK ORDER: rows are not in (updatedAt desc, key desc) order")
    if profile:
        profiler = cProfile.Profile()
        profiler.runcall(walk, catalog, query)
        result.notes.append("profile of a second full walk:\n" + _top(profiler))

    # one page of 100 after a random position (a cursor the catalog issued for it)
    codec = CursorCodec(store.secret())
    fingerprint = query.fingerprint()
    cursors = [codec.encode(Position(*rng.choice(seen)), fingerprint) for _ in range(300)]
    samples = []
    for cursor in cursors:
        started = time.perf_counter()
        catalog.page(query, limit=PAGE, cursor=cursor)
        samples.append((time.perf_counter() - started) * 1000)
    result.figures["page_median_ms"] = statistics.median(samples)
    result.figures["page_p95_ms"] = p95(samples)

    # direct children of nodes that have some
    parents = [rng.choice(plan.parents) for _ in range(300)]
    counts = []
    samples = []
    for key in parents:
        started = time.perf_counter()
        counts.append(len(store.children(key)))
        samples.append((time.perf_counter() - started) * 1000)
    result.figures["children_median_ms"] = statistics.median(samples)
    result.figures["children_mean_count"] = statistics.fmean(counts)

    # every descendant of the large subtree
    big = store.get(plan.big_root)
    assert big is not None
    found = len(store.descendants(big.lineage_path))
    if found != plan.big_size - 1:
        result.notes.append(f"DESCENDANTS MISMATCH: {found} found, {plan.big_size - 1} expected")
    samples = timed_ms(lambda: store.descendants(big.lineage_path), 40)
    result.figures["descendants_median_ms"] = statistics.median(samples)
    result.figures["descendants_count"] = found

    # label lookups (label + agent, the catalog's by_label)
    labels = [rng.choice(plan.labels) for _ in range(300)]
    samples = []
    for label, agent in labels:
        started = time.perf_counter()
        hits = catalog.by_label(label, agent)
        samples.append((time.perf_counter() - started) * 1000)
        if len(hits) != 1:
            result.notes.append(f"LABEL MISMATCH: {label!r}/{agent} gave {len(hits)} rows")
            break
    result.figures["label_median_ms"] = statistics.median(samples)

    if profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for cursor in cursors:
            catalog.page(query, limit=PAGE, cursor=cursor)
        for _ in range(40):
            store.descendants(big.lineage_path)
        profiler.disable()
        result.notes.append("profile of 300 random pages + 40 subtree reads:\n" + _top(profiler))


def walk(catalog: SessionCatalog, query: SessionQuery) -> tuple[list[tuple[int, str]], int]:
    """Every row's (updatedAt, key), by pages of 100 through catalog cursors; and the page
    count."""
    page = catalog.page(query, limit=PAGE)
    seen = [(e.updated_at, e.key) for e in page.entries]
    pages = 1
    while page.next_cursor is not None:
        page = catalog.page(query, limit=PAGE, cursor=page.next_cursor)
        seen.extend([(e.updated_at, e.key) for e in page.entries])
        pages += 1
    return seen, pages


def _top(profiler: cProfile.Profile, limit: int = 14) -> str:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(limit)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    return "\n".join("    " + line for line in lines[start:])


# --- backends --------------------------------------------------------------------------------


@contextmanager
def sqlite_store() -> Iterator[Store]:
    from clawline.store.sqlite.store import SQLiteStore

    folder = Path(tempfile.mkdtemp(prefix="clawline-bench-"))
    store = SQLiteStore(folder / "bench.db")
    try:
        yield store
    finally:
        store.close()
        shutil.rmtree(folder, ignore_errors=True)


def _built_marker(path: Path) -> Path:
    return path.with_name(path.name + ".built")


@contextmanager
def kept_sqlite_store(path: Path, size: int) -> Iterator[tuple[Store, bool]]:
    """The SQLite store at ``path``, kept afterwards; and whether it already holds the data set
    of ``size`` rows. A marker file ``<path>.built`` (see :func:`mark_built`) says which size the
    file holds, so a half-built or differently sized file is never measured."""
    from clawline.store.sqlite.store import SQLiteStore

    marker = _built_marker(path)
    built = path.exists() and marker.exists() and marker.read_text().strip() == str(size)
    if path.exists() and not built:
        raise SystemExit(f"{path} does not hold a finished {size:,}-row build; delete it first")
    store = SQLiteStore(path)
    try:
        yield store, built
    finally:
        store.close()


def mark_built(path: Path, size: int) -> None:
    _built_marker(path).write_text(f"{size}\n")


@contextmanager
def postgres_store(url: str) -> Iterator[Store]:
    import psycopg
    from psycopg import sql

    from clawline.store.postgres.store import PostgresStore

    schema = f"clawline_bench_{uuid.uuid4().hex[:12]}"
    store = PostgresStore(url, schema=schema)
    try:
        yield store
    finally:
        store.close()
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def run(backend: str, size: int, args: argparse.Namespace) -> Result:
    plan = build_plan(size)
    result = Result(backend, size)
    with ExitStack() as stack:
        built = False
        if args.reuse is not None:
            store, built = stack.enter_context(kept_sqlite_store(args.reuse, size))
        elif backend == "sqlite":
            store = stack.enter_context(sqlite_store())
        else:
            store = stack.enter_context(postgres_store(args.pg_url))
        if built:
            print(f"[{backend} {size:,}] reusing {args.reuse} ...", file=sys.stderr, flush=True)
            result.reused = True
            result.figures.update(insert_row_rate=math.nan, insert_bulk_rate=math.nan)
        else:
            print(f"[{backend} {size:,}] building ...", file=sys.stderr, flush=True)
            per_row_rate, bulk_rate, head, tail = load(store, plan, args.per_row, args.batch)
            result.figures.update(
                insert_row_rate=per_row_rate, insert_bulk_rate=bulk_rate, head=head, tail=tail
            )
            if args.reuse is not None:
                mark_built(args.reuse, size)
        print(f"[{backend} {size:,}] measuring ...", file=sys.stderr, flush=True)
        measure(store, plan, result, args.profile)
    result.figures["subagents"] = plan.subagents
    result.figures["labels"] = len(plan.labels)
    return result


# --- report ----------------------------------------------------------------------------------

ROWS: list[tuple[str, str, str]] = [
    # (label, figure, format)
    ("insert, catalog.patch, 1 row per transaction (rows/s)", "insert_row_rate", "{:,.0f}"),
    ("insert, catalog.patch, batched transactions (rows/s)", "insert_bulk_rate", "{:,.0f}"),
    ("page of 100 by updatedAt, median (ms)", "page_median_ms", "{:.2f}"),
    ("page of 100 by updatedAt, p95 (ms)", "page_p95_ms", "{:.2f}"),
    ("full keyset walk, pages of 100, median of 3 (s)", "walk_s", "{:.2f}"),
    ("children of a node, median (ms)", "children_median_ms", "{:.3f}"),
    ("descendants of the 1,010-node subtree, median (ms)", "descendants_median_ms", "{:.2f}"),
    ("label lookup, median (ms)", "label_median_ms", "{:.3f}"),
]


def report(results: list[Result], args: argparse.Namespace) -> str:
    heads = [f"{r.backend} {r.size:,}" for r in results]
    width = max(len(label) for label, _, _ in ROWS) + 2
    cols = [max(14, len(h) + 2) for h in heads]
    lines = ["".ljust(width) + "".join(h.rjust(c) for h, c in zip(heads, cols, strict=True))]
    lines.append("-" * len(lines[0]))
    for label, name, fmt in ROWS:
        cells = [
            ("-" if math.isnan(r.figures[name]) else fmt.format(r.figures[name])).rjust(c)
            for r, c in zip(results, cols, strict=True)
        ]
        lines.append(label.ljust(width) + "".join(cells))
    lines.append("")
    for r in results:
        f = r.figures
        loaded = (
            f"built earlier, reused from {args.reuse}"
            if r.reused
            else f"{f['head']:,.0f} rows one per transaction, "
            f"{f['tail']:,.0f} in batches of {args.batch}"
        )
        lines.append(
            f"{r.backend} {r.size:,}: {loaded}; {f['subagents']:,.0f} sub-agents, "
            f"{f['labels']:,.0f} labels; walk {f['walk_pages']:,.0f} pages; children per node "
            f"{f['children_mean_count']:.1f} on average; subtree {f['descendants_count']:,.0f}"
        )
        lines.extend(f"  {note}" for note in r.notes)
    checked = [r for r in results if r.backend == "sqlite" and r.size == 100_000]
    if checked:
        f = checked[0].figures
        lines += ["", "targets (SQLite, 100,000 sessions):"]
        for name, label, unit in (
            ("page_median_ms", "page of 100, median", "ms"),
            ("page_p95_ms", "page of 100, p95", "ms"),
            ("walk_s", "full keyset walk", "s"),
            ("descendants_median_ms", "descendants of 1,000-node subtree, median", "ms"),
        ):
            target = TARGETS[name]
            verdict = "PASS" if f[name] <= target else "MISS"
            lines.append(
                f"  {label:<45} {f[name]:8.2f} {unit:<2}  target <= {target:g} {unit}  {verdict}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated row counts")
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument(
        "--per-row", type=int, default=5000, help="rows written one transaction each (default 5000)"
    )
    parser.add_argument("--batch", type=int, default=1000, help="rows per batched transaction")
    parser.add_argument("--profile", action="store_true", help="add cProfile summaries")
    parser.add_argument(
        "--reuse",
        type=Path,
        metavar="PATH",
        help="SQLite only, one size: build into PATH and keep it, or measure PATH if an earlier "
        "run built it (for iterating on read paths)",
    )
    args = parser.parse_args(argv)
    sizes = [int(part.replace("_", "")) for part in args.sizes.split(",") if part.strip()]
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    if args.reuse is not None and (backends != ["sqlite"] or len(sizes) != 1):
        parser.error("--reuse needs --backend sqlite and exactly one size")
    results = [run(backend, size, args) for backend in backends for size in sizes]
    print(report(results, args))
    return (
        1 if any("MISMATCH" in note or "ORDER" in note for r in results for note in r.notes) else 0
    )


if __name__ == "__main__":
    raise SystemExit(main())
