"""No two modules of ``src/clawline`` share a file name unless the name means the same thing in
each place (issue 13: "no two modules with the same file name and different meanings").

A name that repeats by design is in :data:`ALLOWED`, with the reason; every other repeat is a
module to rename so that its name says what it is.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "clawline"

ALLOWED: dict[str, str] = {
    "plugin.py": "each package's built-in plugin object, registering what that package provides",
    "base.py": "each package's seam: the interface its implementations follow (providers, tools, "
    "channel adapters, store backends)",
    "registry.py": "each package's registry of its things (methods, providers, tools, channel "
    "adapters, pairings, tasks)",
    "connection.py": "the two sides, client and gateway, of one WebSocket connection",
    "handshake.py": "the two sides, client and gateway, of one connect handshake",
    "store.py": "the store of each backend (sqlite, postgres)",
    "migrations.py": "the schema migrations of each backend",
    "instance_lock.py": "the SQLite store's one-gateway lock: its interface and the backend's",
    "instances.py": "the gateway instances at each layer: the store interface, the "
    "registration and lease, the CLI's `clawline instances`",
    "instance_schema.py": "the gateway instance tables' schema of each backend",
    "event_log.py": "the event log shared by several gateway instances: the store interface and "
    "the PostgreSQL backend's",
    "collab_schema.py": "the collaboration tables' schema of each backend",
    "idempotency_schema.py": "the run idempotency table's schema of each backend",
    "pairing_schema.py": "the device pairing table's schema of each backend",
    "channel_schema.py": "the channel tables' schema (outbox, cursors) of each backend",
    "collab.py": "the collaboration tables at each layer: records, store interface, each backend",
    "idempotency.py": "run idempotency at each layer: the record, the store interface, the "
    "agents' cache over it",
    "pairing.py": "device pairing at each layer: the record, the store interface, the test "
    "helper that pairs through them",
    "outbox.py": "the channel outbox at each layer: the record and the store interface",
    "clock.py": "the clock and its test double (clawline.testing.clock.FakeClock)",
    "tasks.py": "the tasks surface of each adapter: the CLI's `clawline tasks` group and the "
    "gateway's `tasks.*` methods",
    "listing.py": "listing sessions page by page: the gateway's `sessions.list` and ACP's "
    "`session/list`, one gateway call per page",
}

NOT_MODULES = {"__init__.py", "__main__.py"}


def repeated_names() -> dict[str, list[str]]:
    places: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name not in NOT_MODULES:
            places[path.name].append(str(path.relative_to(PACKAGE)))
    return {name: found for name, found in places.items() if len(found) > 1}


def test_no_file_name_repeats_with_another_meaning() -> None:
    unexplained = {name: found for name, found in repeated_names().items() if name not in ALLOWED}
    assert unexplained == {}, "rename these modules, or add the name to ALLOWED with a reason"


def test_every_allowed_name_has_a_reason() -> None:
    assert all(reason.strip() for reason in ALLOWED.values())


def test_the_lists_name_only_repeats() -> None:
    """A name that no longer repeats leaves the list."""
    assert set(ALLOWED) - set(repeated_names()) == set()
