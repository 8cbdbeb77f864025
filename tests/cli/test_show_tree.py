"""``clawline sessions show`` and ``clawline sessions tree``."""

from __future__ import annotations

import json

from clawline.sessions.catalog import SessionCatalog
from clawline.testing import FakeClock

from .helpers import Cli, lines, seed_family


def test_show_text_has_entry_lineage_children_and_events(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    main, a, _b, c = seed_family(catalog, clock)
    catalog.append(a, "message", {"text": "hello"})
    clock.advance(1000)
    catalog.append(a, "tool", {"name": "grep", "args": {"z": 1, "a": "x"}})
    catalog.patch(a, {"model": "gpt"})
    entry = catalog.require(a)
    assert lines(clawline.ok("sessions", "show", "subagent:a")) == [
        "session:",
        "  key            agent:main:subagent:a",
        f"  session id     {entry.session_id}",
        "  agent          main",
        "  label          researcher",
        "  created        2026-09-21 14:14:20Z (3m ago)",
        "  updated        2026-09-21 14:17:21Z (just now)",
        "lineage:",
        "  parent         agent:main:main",
        "  path           /agent:main:main/agent:main:subagent:a",
        "  depth          1",
        "  root           agent:main:main",
        f"  trace id       {entry.trace_id}",
        "  children       1",
        "  child keys     agent:main:subagent:c",
        "other fields:",
        '  model          "gpt"',
        "events:",
        '  #1  2026-09-21 14:17:20Z  message  {"text":"hello"}',
        '  #2  2026-09-21 14:17:21Z  tool  {"args":{"a":"x","z":1},"name":"grep"}',
    ]
    assert main == entry.root_session_key
    assert c in clawline.ok("sessions", "show", a)


def test_show_events_option_limits_the_tail(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    key = catalog.patch("main", {}).key
    for number in range(1, 8):
        catalog.append(key, "message", {"n": number})
    out = lines(clawline.ok("sessions", "show", key, "--events", "2"))
    assert [line.split()[0] for line in out[out.index("events:") + 1 :]] == ["#6", "#7"]
    out = lines(clawline.ok("sessions", "show", key, "--events", "0"))
    assert out[-1] == "events: none"


def test_show_json_is_the_row_plus_children(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    main, a, b, _c = seed_family(catalog, clock)
    document = json.loads(clawline.ok("sessions", "show", "main", "--format", "json"))
    expected = catalog.require(main).to_json()
    assert list(document) == [*expected, "children"]
    assert {name: document[name] for name in expected} == expected
    assert document["children"] == [b, a]  # newest first
    assert document["lineage"] == {"parent": None, "path": "/agent:main:main", "depth": 0}


TREE = [
    'root agent:main:main ── "Main chat"  [running]',
    '├── agent:main:subagent:a ── "researcher"  [-]',
    "│   └── agent:main:subagent:c  [done]",
    "└── agent:main:subagent:b  [-]",
]


def test_tree_of_a_key_draws_its_whole_tree_with_the_key_marked(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    assert lines(clawline.ok("sessions", "tree", "agent:main:subagent:c")) == [
        TREE[0],
        TREE[1],
        TREE[2] + "  ◀",
        TREE[3],
    ]
    assert lines(clawline.ok("sessions", "tree", "main")) == [TREE[0] + "  ◀", *TREE[1:]]


def test_tree_without_key_draws_every_tree(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    catalog.patch("agent:ops:main", {"label": "ops"})
    clock.advance(1)
    catalog.patch("agent:ops:subagent:x", {"spawnedBy": "agent:ops:gone"})
    # trees by their root's creation time; a placeholder root has none and comes first
    assert lines(clawline.ok("sessions", "tree")) == [
        "root agent:ops:gone  (not in catalog)",
        "└── agent:ops:subagent:x  [-]",
        *TREE,
        'root agent:ops:main ── "ops"  [-]',
    ]


def test_tree_after_deleting_a_middle_node_keeps_the_grandchild_in_place(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    _main, a, _b, c = seed_family(catalog, clock)
    clawline.ok("sessions", "delete", a, "--yes")
    expected = [
        TREE[0],
        "├── agent:main:subagent:a  (not in catalog)",
        TREE[2],
        TREE[3],
    ]
    assert lines(clawline.ok("sessions", "tree")) == expected
    assert lines(clawline.ok("sessions", "tree", c)) == [*expected[:2], TREE[2] + "  ◀", TREE[3]]


def test_tree_json_nests_nodes_with_placeholders(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    main, a, b, c = seed_family(catalog, clock)
    catalog.delete(a)
    document = json.loads(clawline.ok("sessions", "tree", "subagent:b", "--format", "json"))
    assert list(document) == ["trees", "focus"]
    assert document["focus"] == b

    def shape(node: dict[str, object]) -> object:
        entry = node["entry"]
        assert list(node) == ["key", "entry", "children"]
        if entry is not None:
            assert isinstance(entry, dict)
            assert entry == catalog.require(node["key"]).to_json()
        children = node["children"]
        assert isinstance(children, list)
        return (node["key"], entry is not None, [shape(child) for child in children])

    assert [shape(root) for root in document["trees"]] == [
        (main, True, [(a, False, [(c, True, [])]), (b, True, [])])
    ]


def test_tree_json_without_key_lists_every_root(
    clawline: Cli, catalog: SessionCatalog, clock: FakeClock
) -> None:
    seed_family(catalog, clock)
    catalog.patch("agent:ops:main", {})
    document = json.loads(clawline.ok("sessions", "tree", "--format", "json"))
    assert document["focus"] is None
    assert [root["key"] for root in document["trees"]] == ["agent:main:main", "agent:ops:main"]


def test_tree_of_an_empty_catalog(clawline: Cli) -> None:
    assert clawline.ok("sessions", "tree") == "no sessions\n"
    assert json.loads(clawline.ok("sessions", "tree", "--format", "json")) == {
        "trees": [],
        "focus": None,
    }
