"""Families and trees of sessions, built from stored lineage paths."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clawline.records.session import SessionEntry
    from clawline.store.base import Store


def lineage_parent(entry: SessionEntry) -> str | None:
    """A session's parent: ``parentSessionKey`` when set, else ``spawnedBy``."""
    return entry.parent_session_key or entry.spawned_by


@dataclass(frozen=True, slots=True)
class Family:
    """A session and its direct children (newest first)."""

    current: SessionEntry | None
    children: list[SessionEntry]


@dataclass(slots=True)
class TreeNode:
    """A node of a lineage tree. ``entry`` is ``None`` for a key that is on some session's
    path but not in the catalog (never created, or deleted)."""

    key: str
    entry: SessionEntry | None
    children: list[TreeNode] = field(default_factory=list)

    def walk(self) -> Iterable[tuple[int, TreeNode]]:
        """Depth-first, pre-order: ``(depth below this node, node)``."""
        stack: list[tuple[int, TreeNode]] = [(0, self)]
        while stack:
            depth, node = stack.pop()
            yield depth, node
            stack.extend((depth + 1, child) for child in reversed(node.children))

    def size(self) -> int:
        return sum(1 for _ in self.walk())


def family(store: Store, key: str) -> Family:
    """``key``'s entry (``None`` if missing) and its direct children."""
    return Family(current=store.get(key), children=store.children(key))


def _order(node: TreeNode) -> tuple[int, str]:
    return (node.entry.created_at if node.entry else -1, node.key)


def build_forest(entries: Iterable[SessionEntry], *, placeholders: bool = False) -> list[TreeNode]:
    """Arrange entries into trees by their lineage paths.

    Each entry hangs under its nearest ancestor among ``entries``. With ``placeholders``,
    ancestors missing from ``entries`` get an ``entry=None`` node instead, so every path is
    drawn in full. Children are ordered by creation time, then key.
    """
    nodes: dict[str, TreeNode] = {}
    paths: dict[str, tuple[str, ...]] = {}
    for entry in entries:
        nodes[entry.key] = TreeNode(entry.key, entry)
        paths[entry.key] = entry.lineage_path
    if placeholders:
        for path in list(paths.values()):
            for depth, ancestor in enumerate(path[:-1]):
                if ancestor not in nodes:
                    nodes[ancestor] = TreeNode(ancestor, None)
                    paths[ancestor] = path[: depth + 1]
    roots: list[TreeNode] = []
    for key, node in nodes.items():
        parent = next((a for a in reversed(paths[key][:-1]) if a in nodes), None)
        if parent is None:
            roots.append(node)
        else:
            nodes[parent].children.append(node)
    for node in nodes.values():
        node.children.sort(key=_order)
    roots.sort(key=_order)
    return roots


def tree_of(store: Store, key: str) -> TreeNode | None:
    """The whole tree ``key`` belongs to, from its root; ``None`` if ``key`` is unknown."""
    entry = store.get(key)
    if entry is None:
        return None
    forest = build_forest(store.tree(entry.root_session_key), placeholders=True)
    return next(node for node in forest if node.key == entry.root_session_key)
